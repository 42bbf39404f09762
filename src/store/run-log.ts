import type { Kysely } from 'kysely';
import type { SyncRunRow } from '../sync/store-port.js';
import type { Database } from './db-schema.js';

/** Appends one row to `sync_runs`, the log of every sync run. */
export async function appendRun(db: Kysely<Database>, row: SyncRunRow): Promise<void> {
  await db
    .insertInto('sync_runs')
    .values({
      run_id: row.runId,
      tenant: row.tenant,
      collection: row.collection,
      variant: row.variant,
      mode: row.mode,
      started_at: row.startedAt,
      finished_at: row.finishedAt,
      status: row.status,
      fetched: row.fetched,
      inserted: row.inserted,
      updated: row.updated,
      unchanged: row.unchanged,
      deleted: row.deleted,
      requests: row.requests,
      ms: Math.round(row.ms),
      error: row.error,
    })
    .execute();
}
