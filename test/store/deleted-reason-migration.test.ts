import { join } from 'node:path';
import { type Kysely, Migrator, sql } from 'kysely';
import { describe, expect, it, onTestFinished } from 'vitest';
import { migrationProvider } from '../../src/store/migrate.js';
import { connectPostgres } from '../../src/store/postgres/postgres-engine.js';
import { openDatabase } from '../../src/store/sqlite/open-database.js';
import { testDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/sync-harness.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations take Kysely<any>, and so does their migrator here
type AnyDb = Kysely<any>;

/** The last migration before deleted_reason and changes.reason. */
const BEFORE = '2026-11-27-020-change-log-row-lock';

async function sqliteDb(): Promise<AnyDb> {
  const { db } = openDatabase(join(tempDir(), 'old.db'));
  onTestFinished(() => db.destroy());
  return db as unknown as AnyDb;
}

async function postgresDb(): Promise<AnyDb> {
  const engine = await connectPostgres(await testDatabase());
  onTestFinished(() => engine.close());
  return engine.db as unknown as AnyDb;
}

describe.each([
  ['SQLite', sqliteDb],
  ['PostgreSQL', postgresDb],
])('migrating a mirror tombstoned before deleted_reason, on %s', (_engine, open) => {
  it("fills 'deleted' for rows and logged deletes from before, and leaves live rows and other changes without one", async () => {
    const db = await open();
    const migrator = new Migrator({ db, provider: migrationProvider });
    const to = await migrator.migrateTo(BEFORE);
    expect(to.error).toBeUndefined();
    const doc = (id: string) => JSON.stringify({ id, updatedAt: '2026-01-01T00:00:00.000Z' });
    for (const id of ['gone', 'live', 'draft-gone']) {
      const table = id === 'draft-gone' ? 'doc_variants' : 'series';
      const scope = id === 'draft-gone' ? ', collection, variant' : '';
      const scoped = id === 'draft-gone' ? ", 'series', 'draft'" : '';
      await sql
        .raw(
          `INSERT INTO ${table} (tenant, id, updated_at, doc, mirrored_at, last_change${scope}) VALUES ('acme', '${id}', '2026-01-01T00:00:00.000Z', '${doc(id)}', '2026-01-01T00:00:00.000Z', 'insert'${scoped})`,
        )
        .execute(db);
    }
    await sql
      .raw(
        "UPDATE series SET deleted_at = '2026-01-02T00:00:00.000Z', last_change = 'delete', mirrored_at = '2026-01-02T00:00:00.000Z' WHERE id = 'gone'",
      )
      .execute(db);
    await sql
      .raw(
        "UPDATE doc_variants SET deleted_at = '2026-01-02T00:00:00.000Z', last_change = 'delete', mirrored_at = '2026-01-02T00:00:00.000Z' WHERE id = 'draft-gone'",
      )
      .execute(db);
    const latest = await migrator.migrateToLatest();
    expect(latest.error).toBeUndefined();
    const rows = await sql<{ id: string; deleted_reason: string | null }>`
      SELECT id, deleted_reason FROM series UNION ALL SELECT id, deleted_reason FROM doc_variants ORDER BY id`.execute(
      db,
    );
    expect(rows.rows).toEqual([
      { id: 'draft-gone', deleted_reason: 'deleted' },
      { id: 'gone', deleted_reason: 'deleted' },
      { id: 'live', deleted_reason: null },
    ]);
    const changes = await sql<{ id: string; kind: string; reason: string | null }>`
      SELECT id, kind, reason FROM changes ORDER BY seq`.execute(db);
    expect(changes.rows).toEqual([
      { id: 'gone', kind: 'insert', reason: null },
      { id: 'live', kind: 'insert', reason: null },
      { id: 'draft-gone', kind: 'insert', reason: null },
      { id: 'gone', kind: 'delete', reason: 'deleted' },
      { id: 'draft-gone', kind: 'delete', reason: 'deleted' },
    ]);
    // From now on the triggers copy the row's reason into the delete they log.
    await sql
      .raw(
        "UPDATE series SET deleted_at = '2026-01-03T00:00:00.000Z', deleted_reason = 'unpublished', last_change = 'delete', mirrored_at = '2026-01-03T00:00:00.000Z' WHERE id = 'live'",
      )
      .execute(db);
    const last = await sql<{ kind: string; reason: string | null }>`
      SELECT kind, reason FROM changes ORDER BY seq DESC LIMIT 1`.execute(db);
    expect(last.rows).toEqual([{ kind: 'delete', reason: 'unpublished' }]);
    // The `_live` views have the column too, on either engine.
    const live = await sql<{ deleted_reason: null }>`SELECT deleted_reason FROM series_live`.execute(db);
    expect(live.rows).toEqual([]);
    const down = await migrator.migrateTo(BEFORE);
    expect(down.error).toBeUndefined();
  });
});
