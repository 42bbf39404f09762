import type { Kysely } from 'kysely';

/**
 * Live freshness (config `watch`): which worker watches each tenant (`watch_owners`, a lease: the holder renews it,
 * another worker takes it once it has expired), and per tenant and collection what `status` shows of the watch: the
 * last probe, the last change it saw, and the current probe interval (`watch_state`).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations take Kysely<any> so they stay frozen in time
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('watch_owners')
    .addColumn('tenant', 'text', (c) => c.notNull().primaryKey())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('watch_state')
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('collection', 'text', (c) => c.notNull())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('last_probe_at', 'text')
    .addColumn('last_change_at', 'text')
    .addColumn('interval_ms', 'integer', (c) => c.notNull())
    .addColumn('probes', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('watch_state_pk', ['tenant', 'collection'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('watch_state').ifExists().execute();
  await db.schema.dropTable('watch_owners').ifExists().execute();
}
