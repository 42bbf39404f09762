import { COLLECTIONS, type CollectionSlug, tableFor } from '../vocabulary/collections.js';
import { type ColumnNote, c, int, type RelationNote, t } from './column-note.js';
import { TYPED_COLUMNS, type TypedColumn } from './columns.js';

/**
 * What every table, view and column of the mirror means: the one source `sql --tables`, `sql --schema` and the
 * generated part of docs/schema.md are written from. test/store/schema-catalog.test.ts checks it against a
 * migrated database, so a migration that adds a column without describing it fails there.
 */

/** The columns every collection table has, before its typed columns. */
export const RECORD_COLUMNS: readonly ColumnNote[] = [
  t('tenant', 'tenant slug', true),
  t('id', 'record id as text; for media without an id, the `filename`', true),
  t('updated_at', '`updatedAt`, normalised to UTC (`2026-05-01T17:30:00.000Z`)'),
  t('created_at', '`createdAt`, normalised to UTC'),
  t('doc', 'the record exactly as received, as JSON (query it with `->`, `->>`, `json_each`)', true),
  t(
    'deleted_at',
    'when the mirror took the row out (a tombstone: gone upstream, or unpublished; `deleted_reason` says which); NULL while live',
  ),
  t('seen_run', 'id of the last full sync run that saw the row (how a full sync finds deletions)'),
  t('mirrored_at', 'when understudy last wrote the row', true),
];
/** Added to every record table after its typed columns (migration 2026-11-23-001). */
export const LAST_CHANGE = t(
  'last_change',
  "what the mirror's last write to the row was: `insert`, `update`, `revive` or `delete`",
);

/** Added to every record table last (migration 2026-11-23-060): who made the last write, copied into `changes`. */
export const CHANGE_ORIGIN: readonly ColumnNote[] = [
  t('change_source', 'who made the last write: `sync`, or `write` (a write-through); copied into `changes.source`'),
  t('change_run', 'the sync run (`sync_runs.run_id`) or write job (`write_log.job_id`) behind it'),
];

/** Added to every record table last (migration 2026-11-27-030): why a tombstoned row was taken out. */
export const DELETED_REASON = t(
  'deleted_reason',
  "why the row is tombstoned: `deleted` (gone upstream, or deleted through a write) or `unpublished` (left the published reads, exists upstream as a draft); NULL while live; copied into a delete's `changes.reason`",
);

/** Meanings that say more than the kind of a typed column does. */
const TYPED_MEANINGS: Readonly<Record<string, string>> = {
  status: 'publication status (`_status`): `published` or `draft`',
  start_date_tz: 'IANA time zone of `startDate` (`Europe/London`): where it takes place',
  end_date_tz: 'IANA time zone of `endDate`',
  availability: 'ticket availability (`ticketingA.availability`): `good`, `limited`, `soldOut`, …',
  booking_url: 'where to book (`booking.bookingLinkURL`)',
  url: 'public page of the record (`url`)',
};

const zoneText = (zones: readonly string[] = []) => zones.map((z) => `\`${z}\``).join(', else ');

/** The meaning of a typed column, from how it is read out of the record. */
export function typedColumnMeaning(col: TypedColumn): string {
  const special = TYPED_MEANINGS[col.column];
  if (special) return special;
  switch (col.kind) {
    case 'text':
      return `\`${col.path}\` as text`;
    case 'ref':
      return `id of the record \`${col.path}\` points to (sent as an id, or as a populated object's \`.id\`)`;
    case 'datetime':
      return `\`${col.path}\` as a UTC instant (\`2026-03-01T19:30:00.000Z\`), sorts and compares as text`;
    case 'integer':
    case 'real':
      return `\`${col.path}\` as a number`;
    case 'local':
      return (
        `local wall-clock time of \`${col.path}\` in the zone ${zoneText(col.zone)}, with its UTC offset ` +
        `(\`2025-10-23T19:30:00-07:00\`), as the venue prints it; NULL without a date or a known zone`
      );
  }
}

const SQL_TYPE = { text: 'TEXT', ref: 'TEXT', datetime: 'TEXT', local: 'TEXT', integer: 'INTEGER', real: 'REAL' };

/** Indexes of the collection tables besides the primary key and `<table>_sync`: each on (tenant, column). */
const TENANT_INDEXES: Readonly<Record<string, readonly string[]>> = {
  event_instances: ['event_id', 'venue_id', 'start_date'],
  events: ['season_id', 'venue_id', 'start_date'],
  posts: ['blog_id'],
  pages: ['parent_id'],
  series: ['slug'],
  media: ['filename'],
  redirects: ['from_path'],
};

/** The indexes of `serve`'s reads (migrations 2026-11-28-060; 090, SQLite only), by table: columns after `tenant`. */
const READ_INDEXES: Readonly<Record<string, readonly string[][]>> = {
  seasons: [['slug'], ['start_date'], ['title']],
  series: [['start_date'], ['title']],
  event_instances: [['event_id', 'start_date'], ['mirrored_at']],
  organizations: [['slug']],
  ...Object.fromEntries(
    ['pages', 'posts', 'blogs', 'events', 'venues', 'forms'].map((t) => [t, [['slug'], ['title']]]),
  ),
};

const ABOUT: Readonly<Record<CollectionSlug, string>> = {
  pages: 'website pages',
  posts: 'blog posts',
  blogs: 'blogs (each holds posts)',
  seasons: 'seasons of the programme',
  series: 'series: groups of events',
  events: 'events (productions): what is on',
  'event-instances': 'event instances: one row per performance, with its date, venue and booking link',
  venues: 'venues: where performances take place',
  organizations: 'organizations (companies, presenters)',
  media: 'media files (images)',
  forms: 'forms',
  redirects: 'URL redirects',
  'custom-attributes': 'custom attribute definitions (one record per tenant; read the arrays from `doc`)',
};

const collectionRelation = (collection: CollectionSlug): RelationNote => {
  const name = tableFor(collection);
  const typed = TYPED_COLUMNS[collection];
  // In the order the migrations built the table: typed columns, `last_change`, the `local` columns, the origin, the
  // reason of a tombstone.
  const col = (x: TypedColumn) => c(x.column, SQL_TYPE[x.kind] as ColumnNote['type'], typedColumnMeaning(x));
  return {
    name,
    kind: 'table',
    about: `${ABOUT[collection]} (\`/${collection}\`, published default-locale copy)`,
    columns: [
      ...RECORD_COLUMNS,
      ...typed.filter((x) => x.kind !== 'local').map(col),
      LAST_CHANGE,
      ...typed.filter((x) => x.kind === 'local').map(col),
      ...CHANGE_ORIGIN,
      DELETED_REASON,
    ],
    indexes: [
      'primary key (tenant, id)',
      `${name}_sync (tenant, updated_at, id)`,
      ...(TENANT_INDEXES[name] ?? []).map((col) => `${name}_tenant_${col} (tenant, ${col})`),
      ...[['created_at'], ...(READ_INDEXES[name] ?? [])].map(
        (cols) => `${name}_read_${cols.join('_')} (tenant, ${cols.join(', ')})`,
      ),
    ],
  };
};

const liveView = (table: RelationNote): RelationNote => ({
  name: `${table.name}_live`,
  kind: 'view',
  about: `the live rows of \`${table.name}\` (\`deleted_at IS NULL\`), every column`,
  columns: table.columns,
  indexes: [],
});

const UPCOMING: RelationNote = {
  name: 'upcoming_performances',
  kind: 'view',
  about:
    'one row per live performance from now on (start_date >= now, UTC), with its event and venue titles; ' +
    'a performance whose event or venue is not mirrored keeps its row, with NULL titles',
  columns: [
    t('tenant', 'tenant slug'),
    t('instance_id', 'id of the event instance (`event_instances.id`)'),
    t('event_id', 'id of its event'),
    t('event_title', 'title of the live event; NULL when the event is not mirrored'),
    t('venue_id', 'id of its venue'),
    t('venue_title', 'title of the live venue; NULL when the venue is not mirrored (a draft venue, say)'),
    t('start_date', 'start as a UTC instant (`2026-03-01T19:30:00.000Z`)'),
    t('start_local', 'start as local wall-clock time with its offset (`2025-10-23T19:30:00-07:00`)'),
    t('timezone', 'IANA time zone of the performance (`start_date_tz`)'),
    t('availability', 'ticket availability: `good`, `limited`, `soldOut`, …'),
    t('booking_url', 'where to book'),
  ],
  indexes: [],
};

const SEARCH: readonly RelationNote[] = [
  {
    name: 'search_docs',
    kind: 'table',
    about:
      'what full-text search indexes: one row per live record with a title or name, kept in step with the ' +
      'collection tables by triggers (`understudy search` queries it)',
    columns: [
      int('doc_id', 'row id; `search_fts.rowid`', true),
      t('collection', 'collection slug as in the API path (`events`, `event-instances`)', true),
      t('tenant', 'tenant slug', true),
      t('id', 'id of the record in its collection table', true),
      t('title', "the record's title (organizations: name; media: alt text, else filename)"),
      t('body', "the record's description (media: caption) when it is plain text"),
      t('venue', 'events: the title of their live venue; venues: their city; else NULL'),
    ],
    indexes: ['primary key (doc_id)', 'unique (collection, tenant, id)'],
  },
  {
    name: 'search_fts',
    kind: 'virtual table',
    about:
      'SQLite FTS5 index over `search_docs` (title, body, venue; bm25 weights 10, 1, 4; `ORDER BY rank` uses them). ' +
      'PostgreSQL: `search_docs.tsv`, a generated tsvector with a GIN index',
    columns: [t('title', 'indexed title'), t('body', 'indexed body'), t('venue', 'indexed venue name')],
    indexes: [],
  },
];

const BOOKKEEPING: readonly RelationNote[] = [
  {
    name: 'doc_variants',
    kind: 'table',
    about: 'drafts and other locales, apart from the published rows (only when a tenant asks for them)',
    columns: [
      t('collection', 'collection slug as in the API path (`event-instances`)', true),
      t('tenant', 'tenant slug', true),
      t('id', 'record id as text', true),
      t('variant', '`draft`, `locale:<code>`, `draft+locale:<code>`, …', true),
      ...RECORD_COLUMNS.filter((x) => ['updated_at', 'doc', 'deleted_at', 'seen_run', 'mirrored_at'].includes(x.name)),
      LAST_CHANGE,
      ...CHANGE_ORIGIN,
      DELETED_REASON,
    ],
    indexes: [
      'primary key (collection, tenant, id, variant)',
      'doc_variants_sync (collection, tenant, variant, updated_at, id)',
    ],
  },
  {
    name: 'sync_state',
    kind: 'table',
    about: 'one row per (tenant, collection, variant): the checkpoint committed with each page',
    columns: [
      t('tenant', 'tenant slug', true),
      t('collection', 'collection slug', true),
      t('variant', '`published`, `draft`, `locale:<code>`, …', true),
      t('cursor_updated_at', 'incremental high-water mark: everything up to this (updatedAt, id) is mirrored'),
      t('cursor_id', 'id half of the high-water mark'),
      t('full_run_id', 'a full sync in progress'),
      t('full_after_updated_at', "the full sync's last committed position"),
      t('full_after_id', "id half of the full sync's position"),
      int('incr_active', '1 while an incremental sync is in progress', true),
      t('incr_after_updated_at', "the incremental sync's last committed position"),
      t('incr_after_id', "id half of the incremental sync's position"),
      t('last_success_at', 'when the last run succeeded'),
      t('last_error', 'one-line reason the last run failed'),
      t('full_started_at', 'when the full pass in progress started: rows written since are never its to tombstone'),
      t('last_error_at', 'when the last run failed (null for a failure recorded before this column)'),
      t('last_error_variant', 'the variant whose pass failed, or null; a watch probe clears only `published`'),
    ],
    indexes: ['primary key (tenant, collection, variant)'],
  },
  {
    name: 'sync_runs',
    kind: 'table',
    about: 'one row per collection per sync run',
    columns: [
      int('id', 'row id, autoincrement', true),
      t('run_id', "the run's id (shared by the collections of one run)", true),
      t('tenant', 'tenant slug', true),
      t('collection', 'collection slug', true),
      t('variant', 'which copy was synced', true),
      t('mode', '`full` or `incremental`', true),
      t('started_at', 'when the run started', true),
      t('finished_at', 'when it finished', true),
      t('status', '`ok`, `failed`, `skipped` or `stopped` (a graceful shutdown; the next run resumes)', true),
      int('fetched', 'records fetched', true),
      int('inserted', 'records inserted', true),
      int('updated', 'records updated', true),
      int('unchanged', 'records unchanged', true),
      int('deleted', 'records marked deleted', true),
      int('requests', 'HTTP requests sent, retries included', true),
      int('ms', 'duration in milliseconds', true),
      t('error', 'one-line reason when not `ok`'),
    ],
    indexes: ['primary key (id)', 'sync_runs_tenant (tenant, collection, id)'],
  },
  {
    name: 'sync_leases',
    kind: 'table',
    about: 'one lease per (tenant, collection): the run that may write it now, with its fencing token',
    columns: [
      t('tenant', 'tenant slug', true),
      t('collection', 'collection slug', true),
      t('holder', 'the run holding the lease', true),
      int('token', 'fencing token: grows by one each time the lease changes hands', true),
      t('acquired_at', 'when the holder took it', true),
      t('expires_at', 'when it lapses unless renewed', true),
    ],
    indexes: ['primary key (tenant, collection)'],
  },
  {
    name: 'theme_settings_schemas',
    kind: 'table',
    about: 'the theme-settings schema of a collection (`GET /{collection}/theme-settings/schema`)',
    columns: [
      t('tenant', 'tenant slug', true),
      t('collection', 'collection slug', true),
      t('doc', 'the schema as received, as JSON', true),
      t('fetched_at', 'when it was fetched', true),
    ],
    indexes: ['primary key (tenant, collection)'],
  },
  {
    name: 'write_log',
    kind: 'table',
    about: 'one row per write job (docs/writes.md), updated as the job moves on',
    columns: [
      t('job_id', 'the BullMQ job id', true),
      t('tenant', 'tenant slug', true),
      t('op', '`create`, `update`, `delete` or `bulk`', true),
      t('collection', 'collection slug', true),
      t('record_id', 'id of the record written'),
      t('method', 'HTTP method'),
      int('draft', '1 when written as a draft', true),
      t('idempotency_key', 'the key the app gave, if any'),
      t('status', '`queued`, `running`, `succeeded`, `partial`, `failed`, …', true),
      int('attempts', 'attempts spent (429 waits are not attempts)', true),
      t('error', 'why it failed'),
      t('error_code', 'stable error code (docs/errors.md)'),
      int('upstream_status', 'HTTP status of the last answer'),
      t('failures', 'JSON array of `{id, error}` for bulk records that failed'),
      t('result_id', 'id of the record created or updated'),
      t('note', 'what the worker noted (a park, a wait)'),
      t('enqueued_at', 'when the job was queued'),
      t('started_at', 'when its first attempt started'),
      t('finished_at', 'when it reached a final state'),
      int('wait_ms', 'queued time in milliseconds'),
      int('run_ms', 'running time in milliseconds'),
      t('updated_at', 'when the row last changed', true),
    ],
    indexes: [
      'primary key (job_id)',
      'write_log_status (status, updated_at)',
      'write_log_target (tenant, collection, record_id)',
    ],
  },
  {
    name: 'changes',
    kind: 'table',
    about:
      'the change log: one row per insert, update, delete and revive of a record row, appended by triggers in the ' +
      "write's transaction; read in `seq` order up to where the feed has settled (PostgreSQL: `seq <= " +
      'understudy_settled_seq(since)`), a reader never misses a change that commits late (docs/changes.md)',
    columns: [
      int(
        'seq',
        "grows with every change logged, in the order each record's changes were made (PostgreSQL: not commit order across records); never reused (PostgreSQL: bigint identity)",
        true,
      ),
      t('tenant', 'tenant slug', true),
      t('collection', 'collection slug as in the API path (`event-instances`)', true),
      t('id', 'record id (media: the filename when it has no id)', true),
      t('variant', '`published`, or the `doc_variants` variant (`draft`, `locale:fr`, …)', true),
      t('kind', '`insert`, `update`, `delete` (a tombstone) or `revive`', true),
      t('updated_at_before', "the row's `updated_at` before the change (NULL for an insert)"),
      t('updated_at_after', 'its `updated_at` after (a delete leaves it as it was)'),
      t(
        'fields',
        'JSON array of the top-level field names whose values changed: all of them for an insert, none for a delete',
        true,
      ),
      t('source', '`sync`, or `write` (a write-through)'),
      t('run_id', 'the sync run (`sync_runs.run_id`) or write job (`write_log.job_id`) behind it'),
      t('at', "when the mirror committed it (the row's `mirrored_at`)", true),
      t(
        'reason',
        "a delete's reason, as the row's `deleted_reason`: `deleted` or `unpublished` (deletes logged before migration 2026-11-27-030: `deleted`); NULL for every other kind",
      ),
      int('xid', "PostgreSQL: the logging transaction's id (`xid8`); else NULL (SQLite, older or copied changes)"),
      int('seq_floor', 'PostgreSQL: how far `seq` had gone before that transaction took its id; else NULL'),
    ],
    indexes: ['primary key (seq)', 'changes_at (at)', 'changes_tenant_collection (tenant, collection, seq)'],
  },
  {
    name: 'change_log_lock',
    kind: 'table',
    about:
      'one row, unused since migration 2026-11-28-070 (writers of `changes` commit in parallel); until then, every ' +
      'PostgreSQL transaction that wrote `changes` locked it until it committed. Kept so that processes of an older ' +
      'build still running during an upgrade go on taking it',
    columns: [int('id', 'always 1', true)],
    indexes: ['primary key (id)'],
  },
  {
    name: 'webhook_endpoints',
    kind: 'table',
    about: 'where each webhook endpoint stands in the change log (never its secret)',
    columns: [
      t('id', '`ep_` + 16 hex digits of SHA-256 over the tenant and the URL', true),
      t('tenant', 'tenant slug', true),
      t('url', 'where its batches are POSTed', true),
      int('delivered_seq', 'the last seq handed to it: delivered, or dead-lettered after its last attempt', true),
      t('last_delivery_at', 'when a batch was last received'),
      t('last_error', 'why the last attempt failed'),
      t('last_error_at', 'when it failed'),
      t('disabled_at', 'set when it answered 410 Gone: nothing more is sent (`understudy webhooks enable`)'),
      t('disabled_reason', 'why it was disabled'),
      t('created_at', 'when a worker first saw it', true),
    ],
    indexes: ['primary key (id)'],
  },
  {
    name: 'mirror_checks',
    kind: 'table',
    about:
      "each tenant's last self-check (`understudy check`, or the worker's `schedule.checkCron`), per collection " +
      'and variant',
    columns: [
      t('tenant', 'tenant slug', true),
      t('collection', 'collection slug', true),
      t('variant', '`published`, `draft`, `locale:<code>`, …', true),
      int('local', "the mirror's live rows", true),
      int('upstream', "the upstream's `totalDocs`", true),
      int('drift', '`upstream - local`: negative for records gone upstream, positive for records missed', true),
      t('checked_at', 'when it was checked', true),
      int('missing', 'records the upstream lists with no live row here (null: a counts-only check, `check --counts`)'),
      int('extra', 'live rows the upstream does not list (null: a counts-only check)'),
      int('stale', 'records on both sides whose `updatedAt` differs (null: a counts-only check)'),
    ],
    indexes: ['primary key (tenant, collection, variant)'],
  },
  {
    name: 'watch_owners',
    kind: 'table',
    about: 'which worker keeps each watched tenant live (config `watch`): a lease its holder renews every 5 s',
    columns: [
      t('tenant', 'tenant slug', true),
      t('holder', 'the watching process: host:pid:run', true),
      t('expires_at', 'when another worker may take the watch over, unless renewed', true),
    ],
    indexes: ['primary key (tenant)'],
  },
  {
    name: 'watch_state',
    kind: 'table',
    about:
      'the watch of each tenant and collection, as `status` shows it (kept by the watching worker every few seconds)',
    columns: [
      t('tenant', 'tenant slug', true),
      t('collection', 'collection slug', true),
      t('holder', 'the watching process: host:pid:run', true),
      t('last_probe_at', 'when the collection was last probed'),
      t('last_change_at', 'when the last probe that found a change upstream was made'),
      int('interval_ms', 'the current probe interval, in milliseconds', true),
      int('probes', 'probes made by this holder', true),
      t('updated_at', 'when the row was last written', true),
      t('last_fresh_at', 'when the last probe that succeeded was made (any holder: the newer wins)'),
      t('fresh_since', 'the first probe that succeeded after `sync_state.last_error_at`: it clears that failure'),
    ],
    indexes: ['primary key (tenant, collection)'],
  },
  {
    name: 'kysely_migration',
    kind: 'table',
    about: 'migrations applied (Kysely)',
    columns: [
      c('name', 'VARCHAR(255)', 'migration name (`migrations/<name>.ts`)', true),
      c('timestamp', 'VARCHAR(255)', 'when it ran', true),
    ],
    indexes: ['primary key (name)'],
  },
  {
    name: 'kysely_migration_lock',
    kind: 'table',
    about: "Kysely's migration lock",
    columns: [c('id', 'VARCHAR(255)', 'lock id', true), int('is_locked', '1 while a migration runs', true)],
    indexes: ['primary key (id)'],
  },
];

/** The programme's collections first (what an analyst asks about), then the website's, in vocabulary order. */
const PROGRAMME_FIRST: readonly CollectionSlug[] = [
  ...(['events', 'event-instances', 'venues', 'seasons', 'series', 'organizations'] as const),
  ...COLLECTIONS.filter(
    (c) => !['events', 'event-instances', 'venues', 'seasons', 'series', 'organizations'].includes(c),
  ),
];
const collectionRelations = PROGRAMME_FIRST.map(collectionRelation);

/**
 * Every table and view of a migrated mirror, in the order `--tables` lists them: the views first (they answer the
 * obvious questions), then the collection tables, search, and the bookkeeping; the programme before the website.
 */
export const SCHEMA_CATALOG: readonly RelationNote[] = [
  UPCOMING,
  ...collectionRelations.map(liveView),
  ...collectionRelations,
  ...SEARCH,
  ...BOOKKEEPING,
];

/** Meanings of columns one engine has and the other has not (`table.column`), for `sql --schema`. */
export const ENGINE_COLUMNS: Readonly<Record<string, string>> = {
  'search_docs.tsv': 'PostgreSQL: the weighted tsvector of title (A), venue (B) and body (D), GIN-indexed',
};

/** JSON-valued columns: values print as JSON in `sql --json`. */
export const JSON_COLUMNS: ReadonlySet<string> = new Set(['doc', 'failures', 'fields']);

/** The note for a relation, or undefined. */
export const relationNote = (name: string): RelationNote | undefined => SCHEMA_CATALOG.find((r) => r.name === name);
