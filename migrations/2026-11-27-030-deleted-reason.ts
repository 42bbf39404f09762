import { type Kysely, sql } from 'kysely';
import { inTransaction, isPostgres } from './lib/engine.js';

// Frozen list of the record tables as of this migration (doc_variants apart: it has no `_live` view).
const RECORD_TABLES = [
  'pages',
  'posts',
  'blogs',
  'seasons',
  'series',
  'events',
  'event_instances',
  'venues',
  'organizations',
  'media',
  'forms',
  'redirects',
  'custom_attributes',
];
const TABLES = [...RECORD_TABLES, 'doc_variants'];

/** The column list of the change log's update writers (migrations 2026-11-23-060 and 2026-11-26-001). */
const COLUMNS_FROM = 'source, run_id, at)';
const COLUMNS_TO = 'source, run_id, at, reason)';

/**
 * SQLite: the end of the values of each `<table>_log_update` trigger (2026-11-23-060), and what it becomes. A
 * delete carries the reason its row was tombstoned for; every other change none.
 */
const SQLITE_FROM = 'NEW.change_source, NEW.change_run, NEW.mirrored_at)';
const SQLITE_TO =
  "NEW.change_source, NEW.change_run, NEW.mirrored_at, CASE WHEN NEW.last_change = 'delete' THEN NEW.deleted_reason END)";

/** PostgreSQL: the same in the statement-level update functions (2026-11-26-001, as 2026-11-27-020 left them). */
const PG_FROM = 'n.change_source, n.change_run, n.mirrored_at\n    FROM new_rows n JOIN';
const PG_TO =
  "n.change_source, n.change_run, n.mirrored_at,\n      CASE WHEN n.last_change = 'delete' THEN n.deleted_reason END\n    FROM new_rows n JOIN";
const PG_FUNCTIONS = ['understudy_log_updates', 'understudy_log_updates_variants'];

type Edit = readonly (readonly [from: string, to: string])[];

/** `text` with each edit applied once; an edit whose `from` is not in `text` exactly once is an error. */
const edited = (what: string, text: string, edits: Edit): string =>
  edits.reduce((acc, [from, to]) => {
    if (acc.split(from).length !== 2) throw new Error(`${what} does not hold "${from}" once`);
    return acc.replace(from, to);
  }, text);

/** Each change-log update writer made again with `edits` applied (read back from the database, as 020 does). */
// biome-ignore lint/suspicious/noExplicitAny: migrations take Kysely<any> so they stay frozen in time
async function rewriteWriters(db: Kysely<any>, edits: (pg: boolean) => Edit): Promise<void> {
  if (isPostgres(db)) {
    for (const name of PG_FUNCTIONS) {
      const query = sql<{ def: string }>`SELECT pg_get_functiondef(to_regprocedure(${`${name}()`})) AS def`;
      const def = (await query.execute(db)).rows[0]?.def ?? '';
      await sql.raw(edited(`${name}()`, def, edits(true))).execute(db);
    }
    return;
  }
  for (const t of TABLES) {
    const name = `${t}_log_update`;
    const query = sql<{ sql: string }>`SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ${name}`;
    const ddl = (await query.execute(db)).rows[0]?.sql ?? '';
    const next = edited(name, ddl, edits(false));
    await sql.raw(`DROP TRIGGER ${name}`).execute(db);
    await sql.raw(next).execute(db);
  }
}

/**
 * Why a row was tombstoned: `deleted_reason` on every record table, `'deleted'` (gone upstream, or deleted through
 * a write) or `'unpublished'` (left the published reads but exists upstream as a draft), NULL on a live row; rows
 * tombstoned before this migration were all deletions. The change log's `delete` rows carry the same `reason`,
 * copied by its update writers (SQLite's row triggers, PostgreSQL's statement functions), also filled `'deleted'`
 * for the deletes logged before. On PostgreSQL the `_live` views are made again to take the new column (`SELECT *`
 * was expanded when they were made); SQLite expands it at each query.
 */
// biome-ignore lint/suspicious/noExplicitAny: see rewriteWriters()
export async function up(db: Kysely<any>): Promise<void> {
  await inTransaction(db, async (trx) => {
    // The fill touches neither `doc` nor `deleted_at`: the change log's and the search index's triggers ignore it.
    for (const t of TABLES) {
      await trx.schema.alterTable(t).addColumn('deleted_reason', 'text').execute();
      await trx.updateTable(t).set({ deleted_reason: 'deleted' }).where('deleted_at', 'is not', null).execute();
    }
    await trx.schema.alterTable('changes').addColumn('reason', 'text').execute();
    await trx.updateTable('changes').set({ reason: 'deleted' }).where('kind', '=', 'delete').execute();
    if (isPostgres(trx)) {
      for (const t of RECORD_TABLES)
        await sql.raw(`CREATE OR REPLACE VIEW ${t}_live AS SELECT * FROM ${t} WHERE deleted_at IS NULL`).execute(trx);
    }
    await rewriteWriters(trx, (pg) =>
      pg
        ? [
            [COLUMNS_FROM, COLUMNS_TO],
            [PG_FROM, PG_TO],
          ]
        : [
            [COLUMNS_FROM, COLUMNS_TO],
            [SQLITE_FROM, SQLITE_TO],
          ],
    );
  });
}

// biome-ignore lint/suspicious/noExplicitAny: see rewriteWriters()
export async function down(db: Kysely<any>): Promise<void> {
  await inTransaction(db, async (trx) => {
    const pg = isPostgres(trx);
    await rewriteWriters(trx, (p) =>
      p
        ? [
            [COLUMNS_TO, COLUMNS_FROM],
            [PG_TO, PG_FROM],
          ]
        : [
            [COLUMNS_TO, COLUMNS_FROM],
            [SQLITE_TO, SQLITE_FROM],
          ],
    );
    await trx.schema.alterTable('changes').dropColumn('reason').execute();
    for (const t of TABLES) {
      // PostgreSQL: the `_live` view depends on the column; made again without it.
      const view = pg && t !== 'doc_variants';
      if (view) await sql.raw(`DROP VIEW ${t}_live`).execute(trx);
      await trx.schema.alterTable(t).dropColumn('deleted_reason').execute();
      if (view) await sql.raw(`CREATE VIEW ${t}_live AS SELECT * FROM ${t} WHERE deleted_at IS NULL`).execute(trx);
    }
  });
}
