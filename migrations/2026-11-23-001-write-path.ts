import type { Kysely } from 'kysely';

// Frozen list of the record tables as of this migration.
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
  'doc_variants',
];

/**
 * The fenced, set-based write path: each row says what its last write was (`last_change`, returned by the upsert),
 * a full pass remembers when it started (rows written since are not its to tombstone), and runs hold leases.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations take Kysely<any> so they stay frozen in time
export async function up(db: Kysely<any>): Promise<void> {
  for (const t of RECORD_TABLES) await db.schema.alterTable(t).addColumn('last_change', 'text').execute();
  await db.schema.alterTable('sync_state').addColumn('full_started_at', 'text').execute();
  await db.schema
    .createTable('sync_leases')
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('collection', 'text', (c) => c.notNull())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('token', 'integer', (c) => c.notNull())
    .addColumn('acquired_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('sync_leases_pk', ['tenant', 'collection'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sync_leases').ifExists().execute();
  await db.schema.alterTable('sync_state').dropColumn('full_started_at').execute();
  for (const t of RECORD_TABLES) await db.schema.alterTable(t).dropColumn('last_change').execute();
}
