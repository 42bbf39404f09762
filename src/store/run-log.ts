import type { Kysely } from 'kysely';
import type { Database } from './db-schema.js';
import type { PreparedStatements } from './prepared-statements.js';
import type { SyncRunRow } from './store.js';

/** Appends one row to `sync_runs`, the log of every sync run. */
export function appendRun(db: Kysely<Database>, stmts: PreparedStatements, row: SyncRunRow): void {
  stmts.run(
    db
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
      .compile(),
  );
}
