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

const PG_CHANGE_LOCK = 7_305_045_001;

const COLUMNS =
  'tenant, collection, id, variant, kind, updated_at_before, updated_at_after, fields, source, run_id, at';

/** The top-level keys of `doc` as a sorted jsonb array (`[]` when it is not an object). */
const KEYS = (doc: string) => `CASE WHEN jsonb_typeof(${doc}) = 'object'
  THEN coalesce((SELECT jsonb_agg(k ORDER BY k) FROM jsonb_object_keys(${doc}) k), '[]'::jsonb) ELSE '[]'::jsonb END`;

/** The top-level keys whose values differ between `a` and `b` (added and removed ones included). */
const DIFF = (a: string, b: string) => `CASE WHEN jsonb_typeof(${a}) = 'object' AND jsonb_typeof(${b}) = 'object'
  THEN coalesce((SELECT jsonb_agg(d.key ORDER BY d.key) FROM (
    SELECT coalesce(x.key, y.key) AS key FROM jsonb_each(${a}) x FULL JOIN jsonb_each(${b}) y ON y.key = x.key
    WHERE x.value IS DISTINCT FROM y.value) d), '[]'::jsonb) ELSE '[]'::jsonb END`;

/**
 * PostgreSQL: the change log written once per statement rather than once per row. A page's multi-row upsert fired
 * a PL/pgSQL function per record (with its own key diff query); now one `INSERT … SELECT` over the statement's
 * transition tables logs the whole page. Same rows, same meaning, one `seq` per change in id order within a
 * statement; the transaction-level lock keeps `seq` in commit order as before. SQLite has no statement-level
 * triggers: its row triggers stay.
 */
function pgFunctions(): string[] {
  // Two flavours: a collection's own table (collection passed as the argument, variant 'published', keyed by
  // tenant and id) and doc_variants (collection and variant in the row, and in its key).
  const flavours = [
    { suffix: '', coll: 'TG_ARGV[0]', variant: `'published'`, key: '' },
    {
      suffix: '_variants',
      coll: 'n.collection',
      variant: 'n.variant',
      key: ' AND o.collection = n.collection AND o.variant = n.variant',
    },
  ];
  return flavours.flatMap((f) => [
    `CREATE OR REPLACE FUNCTION understudy_log_inserts${f.suffix}() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM pg_advisory_xact_lock(${PG_CHANGE_LOCK});
  INSERT INTO changes (${COLUMNS})
    SELECT n.tenant, ${f.coll}, n.id, ${f.variant}, 'insert', NULL, n.updated_at, ${KEYS('n.doc')},
      n.change_source, n.change_run, n.mirrored_at
    FROM new_rows n ORDER BY n.id;
  RETURN NULL;
END $fn$`,
    `CREATE OR REPLACE FUNCTION understudy_log_updates${f.suffix}() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM pg_advisory_xact_lock(${PG_CHANGE_LOCK});
  INSERT INTO changes (${COLUMNS})
    SELECT n.tenant, ${f.coll}, n.id, ${f.variant}, coalesce(n.last_change, 'update'), o.updated_at,
      n.updated_at, ${DIFF('n.doc', 'o.doc')}, n.change_source, n.change_run, n.mirrored_at
    FROM new_rows n JOIN old_rows o ON o.tenant = n.tenant AND o.id = n.id${f.key}
    WHERE o.doc IS DISTINCT FROM n.doc OR o.deleted_at IS DISTINCT FROM n.deleted_at
    ORDER BY n.id;
  RETURN NULL;
END $fn$`,
  ]);
}

function pgTriggers(table: string, collection: string | null): string[] {
  const arg = `'${collection ?? ''}'`;
  const suffix = collection === null ? '_variants' : '';
  return [
    `DROP TRIGGER IF EXISTS ${table}_log_insert ON ${table}`,
    `DROP TRIGGER IF EXISTS ${table}_log_update ON ${table}`,
    `CREATE TRIGGER ${table}_log_insert AFTER INSERT ON ${table} REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION understudy_log_inserts${suffix}(${arg})`,
    `CREATE TRIGGER ${table}_log_update AFTER UPDATE ON ${table} REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION understudy_log_updates${suffix}(${arg})`,
  ];
}

const tables = (): [string, string | null][] => [...Object.entries(RECORD_TABLES), ['doc_variants', null]];

// biome-ignore lint/suspicious/noExplicitAny: migrations take Kysely<any> so they stay frozen in time
export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  await inTransaction(db, async (trx) => {
    for (const f of pgFunctions()) await sql.raw(f).execute(trx);
    for (const [t, collection] of tables())
      for (const ddl of pgTriggers(t, collection)) await sql.raw(ddl).execute(trx);
  });
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  await inTransaction(db, async (trx) => {
    for (const [t, collection] of tables()) {
      const arg = `'${collection ?? ''}'`;
      await sql.raw(`DROP TRIGGER IF EXISTS ${t}_log_insert ON ${t}`).execute(trx);
      await sql.raw(`DROP TRIGGER IF EXISTS ${t}_log_update ON ${t}`).execute(trx);
      await sql
        .raw(
          `CREATE TRIGGER ${t}_log_insert AFTER INSERT ON ${t} FOR EACH ROW EXECUTE FUNCTION understudy_log_change(${arg})`,
        )
        .execute(trx);
      await sql
        .raw(
          `CREATE TRIGGER ${t}_log_update AFTER UPDATE ON ${t} FOR EACH ROW WHEN (OLD.doc IS DISTINCT FROM NEW.doc OR OLD.deleted_at IS DISTINCT FROM NEW.deleted_at) EXECUTE FUNCTION understudy_log_change(${arg})`,
        )
        .execute(trx);
    }
    for (const f of ['inserts', 'updates', 'inserts_variants', 'updates_variants'])
      await sql.raw(`DROP FUNCTION IF EXISTS understudy_log_${f}()`).execute(trx);
  });
}
