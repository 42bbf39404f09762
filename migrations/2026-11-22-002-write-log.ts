import type { Kysely } from 'kysely';

/** One row per write job: its target, its latest status, attempts, error and timings (see docs/writes.md). */
// biome-ignore lint/suspicious/noExplicitAny: migrations take Kysely<any> so they stay frozen in time
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('write_log')
    .addColumn('job_id', 'text', (c) => c.primaryKey())
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('op', 'text', (c) => c.notNull())
    .addColumn('collection', 'text', (c) => c.notNull())
    .addColumn('record_id', 'text')
    .addColumn('method', 'text')
    .addColumn('draft', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('idempotency_key', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .addColumn('error_code', 'text')
    .addColumn('upstream_status', 'integer')
    .addColumn('failures', 'text')
    .addColumn('result_id', 'text')
    .addColumn('note', 'text')
    .addColumn('enqueued_at', 'text')
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .addColumn('wait_ms', 'integer')
    .addColumn('run_ms', 'integer')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('write_log_status').on('write_log').columns(['status', 'updated_at']).execute();
  await db.schema
    .createIndex('write_log_target')
    .on('write_log')
    .columns(['tenant', 'collection', 'record_id'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('write_log').ifExists().execute();
}
