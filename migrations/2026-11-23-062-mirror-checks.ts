import type { Kysely } from 'kysely';

/** The last self-check of each tenant, collection and variant: the mirror's live rows against the upstream's count. */
// biome-ignore lint/suspicious/noExplicitAny: migrations take Kysely<any> so they stay frozen in time
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('mirror_checks')
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('collection', 'text', (c) => c.notNull())
    .addColumn('variant', 'text', (c) => c.notNull())
    .addColumn('local', 'integer', (c) => c.notNull())
    .addColumn('upstream', 'integer', (c) => c.notNull())
    .addColumn('drift', 'integer', (c) => c.notNull())
    .addColumn('checked_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('mirror_checks_pk', ['tenant', 'collection', 'variant'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('mirror_checks').ifExists().execute();
}
