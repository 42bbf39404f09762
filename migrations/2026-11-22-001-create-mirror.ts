import type { Kysely } from 'kysely';
import { isPostgres } from './lib/engine.js';

// Frozen copy of the typed columns as of this migration (src/store/columns.ts may move on; this must not).
type ColType = 'text' | 'integer' | 'real';
const DATES: [string, ColType][] = [
  ['start_date', 'text'],
  ['start_date_tz', 'text'],
  ['end_date', 'text'],
  ['end_date_tz', 'text'],
];
const TABLES: Record<string, [string, ColType][]> = {
  pages: [
    ['title', 'text'],
    ['slug', 'text'],
    ['status', 'text'],
    ['parent_id', 'text'],
    ['relative_path', 'text'],
    ['published_at', 'text'],
    ['url', 'text'],
  ],
  posts: [
    ['title', 'text'],
    ['slug', 'text'],
    ['status', 'text'],
    ['blog_id', 'text'],
    ['publish_date', 'text'],
    ['url', 'text'],
  ],
  blogs: [
    ['title', 'text'],
    ['slug', 'text'],
    ['status', 'text'],
    ['url', 'text'],
  ],
  seasons: [['title', 'text'], ['slug', 'text'], ['status', 'text'], ...DATES, ['url', 'text']],
  series: [['title', 'text'], ['slug', 'text'], ['status', 'text'], ...DATES, ['season_id', 'text'], ['url', 'text']],
  events: [
    ['title', 'text'],
    ['slug', 'text'],
    ['status', 'text'],
    ...DATES,
    ['season_id', 'text'],
    ['venue_id', 'text'],
    ['organization_id', 'text'],
    ['url', 'text'],
  ],
  event_instances: [
    ['event_id', 'text'],
    ['venue_id', 'text'],
    ['start_date', 'text'],
    ['start_date_tz', 'text'],
    ['ticketing_system_id', 'text'],
    ['availability', 'text'],
    ['booking_url', 'text'],
  ],
  venues: [
    ['title', 'text'],
    ['slug', 'text'],
    ['status', 'text'],
    ['city', 'text'],
    ['country', 'text'],
    ['url', 'text'],
  ],
  organizations: [
    ['name', 'text'],
    ['slug', 'text'],
    ['status', 'text'],
    ['type', 'text'],
    ['url', 'text'],
  ],
  media: [
    ['filename', 'text'],
    ['url', 'text'],
    ['alt', 'text'],
    ['width', 'integer'],
    ['height', 'integer'],
  ],
  forms: [
    ['title', 'text'],
    ['slug', 'text'],
  ],
  redirects: [
    ['from_path', 'text'],
    ['match_type', 'text'],
    ['to_url', 'text'],
    ['to_reference_id', 'text'],
  ],
  custom_attributes: [],
};
const INDEXES: Record<string, string[][]> = {
  event_instances: [
    ['tenant', 'event_id'],
    ['tenant', 'venue_id'],
    ['tenant', 'start_date'],
  ],
  events: [
    ['tenant', 'season_id'],
    ['tenant', 'venue_id'],
    ['tenant', 'start_date'],
  ],
  posts: [['tenant', 'blog_id']],
  pages: [['tenant', 'parent_id']],
  series: [['tenant', 'slug']],
  media: [['tenant', 'filename']],
  redirects: [['tenant', 'from_path']],
};

// biome-ignore lint/suspicious/noExplicitAny: migrations take Kysely<any> so they stay frozen in time
export async function up(db: Kysely<any>): Promise<void> {
  // The record as received: JSON text on SQLite, jsonb on PostgreSQL.
  const docType = isPostgres(db) ? 'jsonb' : 'text';
  for (const [table, cols] of Object.entries(TABLES)) {
    let t = db.schema
      .createTable(table)
      .addColumn('tenant', 'text', (c) => c.notNull())
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text')
      .addColumn('created_at', 'text')
      .addColumn('doc', docType, (c) => c.notNull())
      .addColumn('deleted_at', 'text')
      .addColumn('seen_run', 'text')
      .addColumn('mirrored_at', 'text', (c) => c.notNull());
    for (const [name, type] of cols) t = t.addColumn(name, type);
    await t.addPrimaryKeyConstraint(`${table}_pk`, ['tenant', 'id']).execute();
    await db.schema.createIndex(`${table}_sync`).on(table).columns(['tenant', 'updated_at', 'id']).execute();
    for (const cols of INDEXES[table] ?? []) {
      await db.schema
        .createIndex(`${table}_${cols.join('_')}`)
        .on(table)
        .columns(cols)
        .execute();
    }
  }

  await db.schema
    .createTable('doc_variants')
    .addColumn('collection', 'text', (c) => c.notNull())
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('variant', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text')
    .addColumn('doc', docType, (c) => c.notNull())
    .addColumn('deleted_at', 'text')
    .addColumn('seen_run', 'text')
    .addColumn('mirrored_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('doc_variants_pk', ['collection', 'tenant', 'id', 'variant'])
    .execute();
  await db.schema
    .createIndex('doc_variants_sync')
    .on('doc_variants')
    .columns(['collection', 'tenant', 'variant', 'updated_at', 'id'])
    .execute();

  await db.schema
    .createTable('sync_state')
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('collection', 'text', (c) => c.notNull())
    .addColumn('variant', 'text', (c) => c.notNull())
    .addColumn('cursor_updated_at', 'text')
    .addColumn('cursor_id', 'text')
    .addColumn('full_run_id', 'text')
    .addColumn('full_after_updated_at', 'text')
    .addColumn('full_after_id', 'text')
    .addColumn('incr_active', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('incr_after_updated_at', 'text')
    .addColumn('incr_after_id', 'text')
    .addColumn('last_success_at', 'text')
    .addColumn('last_error', 'text')
    .addPrimaryKeyConstraint('sync_state_pk', ['tenant', 'collection', 'variant'])
    .execute();

  await db.schema
    .createTable('sync_runs')
    .addColumn('id', isPostgres(db) ? 'serial' : 'integer', (c) =>
      isPostgres(db) ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('collection', 'text', (c) => c.notNull())
    .addColumn('variant', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('fetched', 'integer', (c) => c.notNull())
    .addColumn('inserted', 'integer', (c) => c.notNull())
    .addColumn('updated', 'integer', (c) => c.notNull())
    .addColumn('unchanged', 'integer', (c) => c.notNull())
    .addColumn('deleted', 'integer', (c) => c.notNull())
    .addColumn('requests', 'integer', (c) => c.notNull())
    .addColumn('ms', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .execute();
  await db.schema.createIndex('sync_runs_tenant').on('sync_runs').columns(['tenant', 'collection', 'id']).execute();

  await db.schema
    .createTable('theme_settings_schemas')
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('collection', 'text', (c) => c.notNull())
    .addColumn('doc', 'text', (c) => c.notNull())
    .addColumn('fetched_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('theme_settings_schemas_pk', ['tenant', 'collection'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['theme_settings_schemas', 'sync_runs', 'sync_state', 'doc_variants', ...Object.keys(TABLES)]) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
