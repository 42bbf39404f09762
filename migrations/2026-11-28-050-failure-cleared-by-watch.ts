import type { Kysely } from 'kysely';

/**
 * A failure a watch probe can clear (docs/watch.md): when a collection's last failure was recorded and in which
 * variant's pass (`sync_state.last_error_at`, `last_error_variant`; null for the failures recorded before, which only
 * a successful run clears), and, per watched collection, the last probe that succeeded (`watch_state.last_fresh_at`)
 * and the first one after the collection's last failure (`watch_state.fresh_since`).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations take Kysely<any> so they stay frozen in time
export async function up(db: Kysely<any>): Promise<void> {
  // One column per statement: SQLite's ALTER TABLE adds one at a time.
  await db.schema.alterTable('sync_state').addColumn('last_error_at', 'text').execute();
  await db.schema.alterTable('sync_state').addColumn('last_error_variant', 'text').execute();
  await db.schema.alterTable('watch_state').addColumn('last_fresh_at', 'text').execute();
  await db.schema.alterTable('watch_state').addColumn('fresh_since', 'text').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('watch_state').dropColumn('fresh_since').execute();
  await db.schema.alterTable('watch_state').dropColumn('last_fresh_at').execute();
  await db.schema.alterTable('sync_state').dropColumn('last_error_variant').execute();
  await db.schema.alterTable('sync_state').dropColumn('last_error_at').execute();
}
