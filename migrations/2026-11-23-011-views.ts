import { type Kysely, sql } from 'kysely';
import { inTransaction, isPostgres } from './lib/engine.js';

type Engine = 'sqlite' | 'postgres';
// biome-ignore lint/suspicious/noExplicitAny: migrations take Kysely<any> so they stay frozen in time
const engineOf = (db: Kysely<any>): Engine => (isPostgres(db) ? 'postgres' : 'sqlite');

// Frozen list of the collection tables as of this migration.
const TABLES = [
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
] as const;

/** Now as the stored instants are written (UTC ISO 8601 with milliseconds), so it compares with them as text. */
const NOW: Record<Engine, string> = {
  sqlite: `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`,
  postgres: `to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
};

/**
 * One performance from now on per row. Left joins: a performance whose event or venue is not mirrored (a draft
 * venue, say) keeps its row with NULL titles rather than vanishing from the programme.
 */
const upcoming = (engine: Engine) => `CREATE VIEW upcoming_performances AS
SELECT i.tenant, i.id AS instance_id, i.event_id, e.title AS event_title, i.venue_id, v.title AS venue_title,
  i.start_date, i.start_local, i.start_date_tz AS timezone, i.availability, i.booking_url
FROM event_instances i
LEFT JOIN events e ON e.tenant = i.tenant AND e.id = i.event_id AND e.deleted_at IS NULL
LEFT JOIN venues v ON v.tenant = i.tenant AND v.id = i.venue_id AND v.deleted_at IS NULL
WHERE i.deleted_at IS NULL AND i.start_date >= ${NOW[engine]}`;

/**
 * `<table>_live` for every collection table (its rows with `deleted_at IS NULL`) and `upcoming_performances`.
 * On PostgreSQL `SELECT *` is expanded when the view is created: a later migration that adds a column to a
 * collection table must recreate its `_live` view there (SQLite expands it at each query).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations take Kysely<any> so they stay frozen in time
export async function up(db: Kysely<any>): Promise<void> {
  const engine = engineOf(db);
  await inTransaction(db, async (trx) => {
    for (const t of TABLES)
      await sql.raw(`CREATE VIEW ${t}_live AS SELECT * FROM ${t} WHERE deleted_at IS NULL`).execute(trx);
    await sql.raw(upcoming(engine)).execute(trx);
  });
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropView('upcoming_performances').ifExists().execute();
  for (const t of TABLES) await db.schema.dropView(`${t}_live`).ifExists().execute();
}
