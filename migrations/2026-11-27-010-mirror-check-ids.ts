import type { Kysely } from 'kysely';

/**
 * The self-check compares ids and versions, not only counts: per collection and variant, how many records the
 * mirror misses, holds extra, and holds in another version. Null for a counts-only check (`check --counts`, and
 * every check made before this migration).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations take Kysely<any> so they stay frozen in time
export async function up(db: Kysely<any>): Promise<void> {
  // One column per statement: SQLite's ALTER TABLE adds one at a time.
  for (const column of ['missing', 'extra', 'stale'])
    await db.schema.alterTable('mirror_checks').addColumn(column, 'integer').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  for (const column of ['stale', 'extra', 'missing'])
    await db.schema.alterTable('mirror_checks').dropColumn(column).execute();
}
