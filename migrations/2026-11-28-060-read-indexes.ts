import type { Kysely } from 'kysely';

// Frozen copy of the indexes the reads of `serve` lean on as of this migration (src/store/reads may move on).
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
];
const SLUGGED = ['pages', 'posts', 'blogs', 'seasons', 'events', 'venues', 'organizations', 'forms'];
const INDEXES: [table: string, columns: string[]][] = [
  ...TABLES.map((t): [string, string[]] => [t, ['tenant', 'created_at']]),
  ...SLUGGED.map((t): [string, string[]] => [t, ['tenant', 'slug']]),
  ['seasons', ['tenant', 'start_date']],
  ['series', ['tenant', 'start_date']],
  ['event_instances', ['tenant', 'event_id', 'start_date']],
  // When the instances last changed: the reverse index of their `series` (a list no index serves) is kept until then.
  ['event_instances', ['tenant', 'mirrored_at']],
];

/**
 * Indexes for the reads `serve` answers from the mirror (docs/api.md, Reads): the default order (`-createdAt`),
 * `slug` and `startDate` in every table that has them, and an event's instances in date order. Ids,
 * `updatedAt`, references and the other dates had theirs from the start.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations take Kysely<any> so they stay frozen in time
export async function up(db: Kysely<any>): Promise<void> {
  for (const [table, columns] of INDEXES)
    await db.schema
      .createIndex(`${table}_read_${columns.slice(1).join('_')}`)
      .ifNotExists()
      .on(table)
      .columns(columns)
      .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const [table, columns] of INDEXES)
    await db.schema
      .dropIndex(`${table}_read_${columns.slice(1).join('_')}`)
      .ifExists()
      .execute();
}
