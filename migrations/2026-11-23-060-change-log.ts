import { type Kysely, sql } from 'kysely';
import { inTransaction, isPostgres } from './lib/engine.js';

// Frozen copy, as of this migration, of the record tables and the collection each holds (the slug, as in the API).
const RECORD_TABLES: Record<string, string> = {
  pages: 'pages',
  posts: 'posts',
  blogs: 'blogs',
  seasons: 'seasons',
  series: 'series',
  events: 'events',
  event_instances: 'event-instances',
  venues: 'venues',
  organizations: 'organizations',
  media: 'media',
  forms: 'forms',
  redirects: 'redirects',
  custom_attributes: 'custom-attributes',
};

/**
 * The transaction-level advisory lock every change-writing transaction takes on PostgreSQL (src/store's engine
 * takes it first, the trigger again for writers outside the store): change-writing transactions then commit one at
 * a time, in `seq` order, so a reader never sees a `seq` before a smaller one that commits later.
 */
const PG_CHANGE_LOCK = 7_305_045_001;

const COLUMNS =
  'tenant, collection, id, variant, kind, updated_at_before, updated_at_after, fields, source, run_id, at';

/** SQLite: the top-level keys of NEW.doc (an insert), as a JSON array in key order. */
const SQLITE_KEYS = `(SELECT json_group_array(k) FROM (SELECT key AS k FROM json_each(NEW.doc) ORDER BY key))`;

/** SQLite: the top-level keys whose values differ between OLD.doc and NEW.doc (added and removed ones included). */
const SQLITE_DIFF = `(SELECT json_group_array(k) FROM (
    SELECT n.key AS k FROM json_each(NEW.doc) n WHERE NOT EXISTS
      (SELECT 1 FROM json_each(OLD.doc) o WHERE o.key = n.key AND o.type = n.type AND o.value IS n.value)
    UNION
    SELECT o.key AS k FROM json_each(OLD.doc) o WHERE NOT EXISTS (SELECT 1 FROM json_each(NEW.doc) n WHERE n.key = o.key)
    ORDER BY 1))`;

/** A row changed only by "seen by this full run" (or nothing at all) is no change. */
const SQLITE_CHANGED = 'NEW.doc IS NOT OLD.doc OR NEW.deleted_at IS NOT OLD.deleted_at';
const PG_CHANGED = 'OLD.doc IS DISTINCT FROM NEW.doc OR OLD.deleted_at IS DISTINCT FROM NEW.deleted_at';

function sqliteTriggers(table: string, collection: string | null): string[] {
  const coll = collection === null ? 'NEW.collection' : `'${collection}'`;
  const variant = collection === null ? 'NEW.variant' : `'published'`;
  const values = (kind: string, before: string, fields: string) =>
    `VALUES (NEW.tenant, ${coll}, NEW.id, ${variant}, ${kind}, ${before}, NEW.updated_at, ${fields}, ` +
    'NEW.change_source, NEW.change_run, NEW.mirrored_at)';
  return [
    `CREATE TRIGGER ${table}_log_insert AFTER INSERT ON ${table} BEGIN
      INSERT INTO changes (${COLUMNS}) ${values(`'insert'`, 'NULL', SQLITE_KEYS)}; END`,
    `CREATE TRIGGER ${table}_log_update AFTER UPDATE ON ${table} WHEN ${SQLITE_CHANGED} BEGIN
      INSERT INTO changes (${COLUMNS}) ${values(`coalesce(NEW.last_change, 'update')`, 'OLD.updated_at', SQLITE_DIFF)}; END`,
  ];
}

const PG_FUNCTION = `CREATE OR REPLACE FUNCTION understudy_log_change() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  c text; v text; k text; b text; f jsonb := '[]'::jsonb;
BEGIN
  PERFORM pg_advisory_xact_lock(${PG_CHANGE_LOCK});
  IF TG_ARGV[0] = '' THEN c := NEW.collection; v := NEW.variant; ELSE c := TG_ARGV[0]; v := 'published'; END IF;
  IF TG_OP = 'INSERT' THEN
    k := 'insert'; b := NULL;
    IF jsonb_typeof(NEW.doc) = 'object' THEN
      SELECT coalesce(jsonb_agg(e.key ORDER BY e.key), '[]'::jsonb) INTO f FROM jsonb_each(NEW.doc) e;
    END IF;
  ELSE
    k := coalesce(NEW.last_change, 'update'); b := OLD.updated_at;
    IF jsonb_typeof(NEW.doc) = 'object' AND jsonb_typeof(OLD.doc) = 'object' THEN
      SELECT coalesce(jsonb_agg(d.key ORDER BY d.key), '[]'::jsonb) INTO f FROM (
        SELECT coalesce(n.key, o.key) AS key FROM jsonb_each(NEW.doc) n FULL JOIN jsonb_each(OLD.doc) o
          ON o.key = n.key WHERE n.value IS DISTINCT FROM o.value) d;
    END IF;
  END IF;
  INSERT INTO changes (${COLUMNS})
    VALUES (NEW.tenant, c, NEW.id, v, k, b, NEW.updated_at, f, NEW.change_source, NEW.change_run, NEW.mirrored_at);
  RETURN NULL;
END $fn$`;

function pgTriggers(table: string, collection: string | null): string[] {
  const arg = `'${collection ?? ''}'`;
  return [
    `CREATE TRIGGER ${table}_log_insert AFTER INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION understudy_log_change(${arg})`,
    `CREATE TRIGGER ${table}_log_update AFTER UPDATE ON ${table} FOR EACH ROW WHEN (${PG_CHANGED})
      EXECUTE FUNCTION understudy_log_change(${arg})`,
  ];
}

/**
 * The change log: one `changes` row per insert, update, revive and tombstone of a record row, appended by triggers
 * in the transaction that changes the row (so a rolled-back page logs nothing, and a re-read unchanged record
 * fires nothing). Each row says who changed it last (`change_source`, `change_run`), which the trigger copies.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations take Kysely<any> so they stay frozen in time
export async function up(db: Kysely<any>): Promise<void> {
  await inTransaction(db, (trx) => changeLog(trx));
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
async function changeLog(db: Kysely<any>): Promise<void> {
  const pg = isPostgres(db);
  const tables: [string, string | null][] = [...Object.entries(RECORD_TABLES), ['doc_variants', null]];
  for (const [t] of tables) {
    await db.schema.alterTable(t).addColumn('change_source', 'text').execute();
    await db.schema.alterTable(t).addColumn('change_run', 'text').execute();
  }
  await db.schema
    .createTable('changes')
    .addColumn('seq', pg ? 'bigint' : 'integer', (c) =>
      // By default, not always: a mirror copied between engines keeps its seqs (`store copy`).
      pg ? c.primaryKey().generatedByDefaultAsIdentity() : c.primaryKey().autoIncrement(),
    )
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('collection', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('variant', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('updated_at_before', 'text')
    .addColumn('updated_at_after', 'text')
    .addColumn('fields', pg ? 'jsonb' : 'text', (c) => c.notNull())
    .addColumn('source', 'text')
    .addColumn('run_id', 'text')
    .addColumn('at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('changes_at').on('changes').column('at').execute();
  await db.schema
    .createIndex('changes_tenant_collection')
    .on('changes')
    .columns(['tenant', 'collection', 'seq'])
    .execute();
  if (pg) {
    await sql.raw(PG_FUNCTION).execute(db);
    // PostgreSQL expanded `SELECT *` when the `_live` views were made (2026-11-23-011): they take the new columns.
    for (const t of Object.keys(RECORD_TABLES))
      await sql.raw(`CREATE OR REPLACE VIEW ${t}_live AS SELECT * FROM ${t} WHERE deleted_at IS NULL`).execute(db);
  }
  for (const [t, collection] of tables) {
    for (const ddl of pg ? pgTriggers(t, collection) : sqliteTriggers(t, collection)) await sql.raw(ddl).execute(db);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  const pg = isPostgres(db);
  const live = (t: string) => `CREATE VIEW ${t}_live AS SELECT * FROM ${t} WHERE deleted_at IS NULL`;
  const tables = [...Object.keys(RECORD_TABLES), 'doc_variants'];
  for (const t of tables) {
    for (const when of ['insert', 'update'])
      await sql.raw(`DROP TRIGGER IF EXISTS ${t}_log_${when}${pg ? ` ON ${t}` : ''}`).execute(db);
    // PostgreSQL: the `_live` view depends on the columns; made again without them.
    if (pg && t !== 'doc_variants') await sql.raw(`DROP VIEW ${t}_live`).execute(db);
    await db.schema.alterTable(t).dropColumn('change_run').execute();
    await db.schema.alterTable(t).dropColumn('change_source').execute();
    if (pg && t !== 'doc_variants') await sql.raw(live(t)).execute(db);
  }
  if (pg) await sql.raw('DROP FUNCTION IF EXISTS understudy_log_change()').execute(db);
  await db.schema.dropTable('changes').ifExists().execute();
}
