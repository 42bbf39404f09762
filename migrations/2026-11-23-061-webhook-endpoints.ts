import type { Kysely } from 'kysely';
import { isPostgres } from './lib/engine.js';

/**
 * Where each webhook endpoint stands (never its secret): the last `seq` it was handed (delivered, or dead-lettered
 * after every attempt), and whether a 410 disabled it.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations take Kysely<any> so they stay frozen in time
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('delivered_seq', isPostgres(db) ? 'bigint' : 'integer', (c) => c.notNull())
    .addColumn('last_delivery_at', 'text')
    .addColumn('last_error', 'text')
    .addColumn('last_error_at', 'text')
    .addColumn('disabled_at', 'text')
    .addColumn('disabled_reason', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_endpoints').ifExists().execute();
}
