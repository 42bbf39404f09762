import { Migrator, sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { KyselyChangeLog } from '../../src/store/change-log.js';
import { migrationProvider } from '../../src/store/migrate.js';
import { connectPostgres } from '../../src/store/postgres/postgres-engine.js';
import { testDatabase } from '../helpers/postgres.js';

/** The last migration before writers of the change log commit in parallel. */
const BEFORE = '2026-11-28-060-read-indexes';
const WRITERS = ['understudy_log_inserts', 'understudy_log_updates', 'understudy_log_inserts_variants'];

describe('migrating a PostgreSQL mirror to writers in parallel (2026-11-28-070)', () => {
  it('takes the lock out of the triggers, and the changes logged before settle by themselves, holes and all', async () => {
    const url = await testDatabase();
    const engine = await connectPostgres(url);
    onTestFinished(() => engine.close());
    // biome-ignore lint/suspicious/noExplicitAny: migrations take Kysely<any>, and so does their migrator here
    const db = engine.db as any;
    const migrator = new Migrator({ db, provider: migrationProvider });
    expect((await migrator.migrateTo(BEFORE)).error).toBeUndefined();
    const insert = (id: string, on = db) =>
      sql
        .raw(
          `INSERT INTO series (tenant, id, updated_at, doc, mirrored_at, last_change) VALUES ('acme', '${id}', '2026-01-01T00:00:00.000Z', '{"id":"${id}"}', '2026-01-01T00:00:00.000Z', 'insert')`,
        )
        .execute(on);
    await insert('a');
    // A rolled-back change leaves a hole in the seqs logged before the migration.
    await db
      .transaction()
      .execute(async (trx: typeof db) => {
        await insert('gone', trx);
        throw new Error('roll back');
      })
      .catch(() => undefined);
    await insert('b');
    expect((await migrator.migrateToLatest()).error).toBeUndefined();

    const defs = async () =>
      (
        await sql<{ def: string }>`SELECT pg_get_functiondef(to_regprocedure(name || '()')) AS def
          FROM unnest(${WRITERS}::text[]) AS name`.execute(db)
      ).rows.map((r) => r.def);
    for (const def of await defs()) expect(def).not.toContain('change_log_lock');

    // Another session holds a transaction id open: no floor of a new change can help, the old rows settle alone.
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    onTestFinished(() => holder.end());
    await holder.query('BEGIN');
    await holder.query('SELECT pg_current_xact_id()');
    const log = new KyselyChangeLog(engine);
    expect((await log.read({})).map((c) => [c.seq, c.id])).toEqual([
      [1, 'a'],
      [3, 'b'],
    ]);
    expect(await log.lastSeq()).toBe(3);
    // Changes logged from now on carry their transaction's id; the floor only where a writer noted it.
    await insert('c');
    const rows = await sql<{ id: string; xid: string | null; seq_floor: number | null }>`
      SELECT id, xid::text AS xid, seq_floor FROM changes ORDER BY seq`.execute(db);
    expect(rows.rows.map((r) => [r.id, r.xid === null, r.seq_floor])).toEqual([
      ['a', true, null],
      ['b', true, null],
      ['c', false, null],
    ]);
    await holder.query('ROLLBACK');

    expect((await migrator.migrateTo(BEFORE)).error).toBeUndefined();
    for (const def of await defs()) expect(def).toContain('FROM change_log_lock FOR UPDATE');
  });
});
