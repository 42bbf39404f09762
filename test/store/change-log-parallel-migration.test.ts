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

describe('the settled seq read along the primary key (2026-11-28-080)', () => {
  /** 070's function under another name: the answer 080's must give in every state. */
  const scanning = (name: string) => `CREATE FUNCTION ${name}(since bigint) RETURNS bigint LANGUAGE sql STABLE AS $fn$
    WITH snap AS (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin),
    base AS (SELECT greatest(since, (SELECT max(CASE WHEN c.xid IS NULL THEN c.seq WHEN c.xid < snap.xmin THEN c.seq_floor END)
      FROM changes c WHERE c.seq > since)) AS b FROM snap)
    SELECT min(x.s) FROM (SELECT base.b AS s FROM base UNION ALL SELECT c.seq FROM changes c, base WHERE c.seq > base.b) x
    WHERE NOT EXISTS (SELECT 1 FROM changes n WHERE n.seq = x.s + 1) $fn$`;
  const NOTED = "nullif(current_setting('understudy.seq_floor', true), '')::bigint";
  const change = (n: number, floor = 'NULL') =>
    `INSERT INTO changes (tenant, collection, id, variant, kind, fields, at, seq_floor)
     SELECT 'acme', 'series', 's' || g, 'published', 'insert', '[]', '2026-01-01T00:00:00.000Z', ${floor}
     FROM generate_series(1, ${n}) g`;

  it("gives 070's answer, holes, late commits and all, reading only the recent changes of a long log", async () => {
    const url = await testDatabase();
    const engine = await connectPostgres(url);
    onTestFinished(() => engine.close());
    // biome-ignore lint/suspicious/noExplicitAny: migrations take Kysely<any>, and so does their migrator here
    const db = engine.db as any;
    expect((await new Migrator({ db, provider: migrationProvider }).migrateToLatest()).error).toBeUndefined();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    onTestFinished(() => client.end());
    await client.query(scanning('settled_070'));
    // A long log: 20,000 changes of 200 old transactions, each with its floor noted, as writers leave them.
    let lastXid = '';
    for (let i = 0; i < 200; i++) {
      await client.query('BEGIN');
      await client.query('SELECT understudy_note_seq_floor()');
      await client.query(change(100, NOTED));
      lastXid = (await client.query('SELECT pg_current_xact_id()::text AS x')).rows[0].x as string;
      await client.query('COMMIT');
    }
    await client.query('ANALYZE changes');
    const answers = async (since: number) => {
      const r = await client.query('SELECT understudy_settled_seq($1) AS now, settled_070($1) AS was', [since]);
      return { now: Number(r.rows[0].now), was: Number(r.rows[0].was) };
    };
    expect(await answers(0)).toEqual({ now: 20_000, was: 20_000 });

    // What one call reads, as PostgreSQL counts it for a session of its own (a session's counts not yet flushed
    // would include the calls above): not the log, only its head. A transaction older than the log's that is still
    // running anywhere in the cluster (another test's, in another database) holds the horizon below the log, and the
    // call then reads the changes since it began, as it must: wait until none is.
    const horizonPast = async (xid: string) => {
      for (let i = 0; ; i++) {
        const r = await client.query('SELECT pg_snapshot_xmin(pg_current_snapshot()) > $1::xid8 AS past', [xid]);
        if (r.rows[0].past === true) return;
        if (i === 600) throw new Error(`a transaction older than ${xid} ran for another minute`);
        await new Promise((done) => setTimeout(done, 100));
      }
    };
    const xidOf = async (q: pg.Client) => (await q.query('SELECT pg_current_xact_id()::text AS x')).rows[0].x as string;
    await horizonPast(lastXid);
    const counted = new pg.Client({ connectionString: url });
    await counted.connect();
    onTestFinished(() => counted.end());
    await counted.query('SELECT understudy_settled_seq(0)');
    const read = await counted.query(
      `SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) AS tuples, seq_scan
       FROM pg_stat_xact_user_tables WHERE relname = 'changes'`,
    );
    expect(Number(read.rows[0].seq_scan)).toBe(0);
    // The newest transaction's 100 changes, a few times over (PostgreSQL counts each index probe): not 20,000.
    expect(Number(read.rows[0].tuples)).toBeLessThan(1_000);

    // A writer holds a change uncommitted (its seq taken), others commit after it: the horizon stops below it.
    const slow = new pg.Client({ connectionString: url });
    await slow.connect();
    onTestFinished(() => slow.end());
    await slow.query('BEGIN');
    await slow.query('SELECT understudy_note_seq_floor()');
    await slow.query(change(1, NOTED));
    const slowXid = await xidOf(slow);
    await db.transaction().execute(async (trx: typeof db) => {
      await sql`select understudy_note_seq_floor()`.execute(trx);
      await sql.raw(change(3, NOTED)).execute(trx);
    });
    for (const since of [0, 19_990, 20_000]) expect(await answers(since)).toEqual({ now: 20_000, was: 20_000 });
    await slow.query('COMMIT');
    await horizonPast(slowXid);
    for (const since of [0, 20_000, 20_002]) expect(await answers(since)).toEqual({ now: 20_004, was: 20_004 });

    // A rollback leaves a hole; a later writer's floor passes it.
    await client.query('BEGIN');
    await client.query(change(2));
    await client.query('ROLLBACK');
    await client.query(change(1));
    expect(await answers(20_004)).toEqual({ now: 20_004, was: 20_004 });
    let writerXid = '';
    await db.transaction().execute(async (trx: typeof db) => {
      await sql`select understudy_note_seq_floor()`.execute(trx);
      await sql.raw(change(1, NOTED)).execute(trx);
      writerXid = (await sql<{ x: string }>`select pg_current_xact_id()::text as x`.execute(trx)).rows[0]?.x ?? '';
    });
    await horizonPast(writerXid);
    expect(await answers(20_004)).toEqual({ now: 20_008, was: 20_008 });
  });
});
