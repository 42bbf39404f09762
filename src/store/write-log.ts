import type { Kysely } from 'kysely';
import { UnderstudyError } from '../errors.js';
import type { BulkFailure, WriteLog, WriteLogEntry, WriteStatus } from '../writes/write-log.js';
import type { Database } from './db-schema.js';

interface Row {
  job_id: string;
  tenant: string;
  op: string;
  collection: string;
  record_id: string | null;
  method: string | null;
  draft: number;
  idempotency_key: string | null;
  status: string;
  attempts: number;
  error: string | null;
  error_code: string | null;
  upstream_status: number | null;
  failures: string | null;
  result_id: string | null;
  note: string | null;
  enqueued_at: string | null;
  started_at: string | null;
  finished_at: string | null;
  wait_ms: number | null;
  run_ms: number | null;
  updated_at: string;
}

const toRow = (e: WriteLogEntry): Row => ({
  job_id: e.jobId,
  tenant: e.tenant,
  op: e.op,
  collection: e.collection,
  record_id: e.recordId,
  method: e.method,
  draft: e.draft ? 1 : 0,
  idempotency_key: e.idempotencyKey,
  status: e.status,
  attempts: e.attempts,
  error: e.error,
  error_code: e.errorCode,
  upstream_status: e.upstreamStatus,
  failures: e.failures ? JSON.stringify(e.failures) : null,
  result_id: e.resultId,
  note: e.note,
  enqueued_at: e.enqueuedAt,
  started_at: e.startedAt,
  finished_at: e.finishedAt,
  wait_ms: e.waitMs,
  run_ms: e.runMs,
  updated_at: e.updatedAt,
});

const fromRow = (r: Row): WriteLogEntry => ({
  jobId: r.job_id,
  tenant: r.tenant,
  op: r.op,
  collection: r.collection,
  recordId: r.record_id,
  method: r.method,
  draft: r.draft === 1,
  idempotencyKey: r.idempotency_key,
  status: r.status as WriteStatus,
  attempts: r.attempts,
  error: r.error,
  errorCode: r.error_code,
  upstreamStatus: r.upstream_status,
  failures: r.failures ? (JSON.parse(r.failures) as BulkFailure[]) : null,
  resultId: r.result_id,
  note: r.note,
  enqueuedAt: r.enqueued_at,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
  waitMs: r.wait_ms,
  runMs: r.run_ms,
  updatedAt: r.updated_at,
});

const storeError = (what: string, err: unknown) =>
  new UnderstudyError('US_STORE', `write_log ${what} failed: ${(err as Error).message}`, { cause: err });

/**
 * The write log over the mirror's own Kysely instance (one connection or pool per process), on either engine.
 * Its schema must be migrated; `close()` leaves the connection to its owner.
 */
export function kyselyWriteLog(db: Kysely<Database>): WriteLog {
  const log = db as unknown as Kysely<{ write_log: Row }>;
  return {
    async record(entry) {
      const row = toRow(entry);
      const { job_id: _id, ...rest } = row;
      try {
        await log
          .insertInto('write_log')
          .values(row)
          .onConflict((oc) => oc.column('job_id').doUpdateSet(rest))
          .execute();
      } catch (err) {
        throw storeError('record', err);
      }
    },
    async get(jobId) {
      try {
        const row = await log.selectFrom('write_log').selectAll().where('job_id', '=', jobId).executeTakeFirst();
        return row ? fromRow(row) : null;
      } catch (err) {
        throw storeError('get', err);
      }
    },
    async list(statuses, limit = 1000) {
      try {
        let q = log.selectFrom('write_log').selectAll();
        if (statuses.length > 0) q = q.where('status', 'in', [...statuses]);
        const rows = await q.orderBy('updated_at', 'desc').orderBy('job_id', 'desc').limit(limit).execute();
        return rows.map(fromRow);
      } catch (err) {
        throw storeError('list', err);
      }
    },
    close: async () => {},
  };
}
