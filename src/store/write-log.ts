import type BetterSqlite3 from 'better-sqlite3';
import { UnderstudyError } from '../errors.js';
import { openMigratedDatabase } from './migrate.js';

/** The part of a better-sqlite3 connection the write log uses. */
type SqliteConnection = Pick<BetterSqlite3.Database, 'prepare'>;

/** Where a write job stands. `running`, `retrying` and `delayed` are passing states; the rest are outcomes. */
export type WriteStatus = 'running' | 'retrying' | 'delayed' | 'ok' | 'partial' | 'failed';

/** One record of a bulk write that the upstream refused. */
export interface BulkFailure {
  readonly id: string;
  readonly status: number | null;
  readonly message: string;
}

/** One row of `write_log`: the latest state of one write job. */
export interface WriteLogEntry {
  readonly jobId: string;
  readonly tenant: string;
  readonly op: string;
  readonly collection: string;
  readonly recordId: string | null;
  /** The HTTP method of the route the write went to. */
  readonly method: string | null;
  readonly draft: boolean;
  readonly idempotencyKey: string | null;
  readonly status: WriteStatus;
  /** Attempts that reached (or may have reached) the upstream so far; waits for the rate budget or order do not count. */
  readonly attempts: number;
  readonly error: string | null;
  readonly errorCode: string | null;
  readonly upstreamStatus: number | null;
  /** Bulk writes: each record that failed, with its error. */
  readonly failures: readonly BulkFailure[] | null;
  /** The id of the record written (creates: the id the upstream gave it). */
  readonly resultId: string | null;
  /** How the write ended when it is worth saying, e.g. `found after unknown outcome`. */
  readonly note: string | null;
  readonly enqueuedAt: string | null;
  readonly startedAt: string | null;
  readonly finishedAt: string | null;
  /** From enqueue to the start of the last attempt. */
  readonly waitMs: number | null;
  /** Duration of the last attempt. */
  readonly runMs: number | null;
  readonly updatedAt: string;
}

/** The `write_log` table: one row per write job, rewritten as the job moves on. */
export interface WriteLog {
  /** Inserts or replaces the row of `entry.jobId`. */
  record(entry: WriteLogEntry): Promise<void>;
  /** The row of one job, or null. */
  get(jobId: string): Promise<WriteLogEntry | null>;
  /** Rows with one of `statuses` (all when empty), newest first, at most `limit`. */
  list(statuses: readonly WriteStatus[], limit?: number): Promise<WriteLogEntry[]>;
  /** Closes the connection. Idempotent. */
  close(): Promise<void>;
}

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

const COLUMNS = [
  'job_id',
  'tenant',
  'op',
  'collection',
  'record_id',
  'method',
  'draft',
  'idempotency_key',
  'status',
  'attempts',
  'error',
  'error_code',
  'upstream_status',
  'failures',
  'result_id',
  'note',
  'enqueued_at',
  'started_at',
  'finished_at',
  'wait_ms',
  'run_ms',
  'updated_at',
] as const;

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
 * The write log over a connection already open on the mirror (the store's own: one handle on the file per
 * process). Its schema must be migrated; `close()` leaves the connection to its owner.
 */
export function sqliteWriteLog(raw: SqliteConnection): WriteLog {
  const upsert = raw.prepare(
    `INSERT OR REPLACE INTO write_log (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((c) => `@${c}`).join(', ')})`,
  );
  const byId = raw.prepare('SELECT * FROM write_log WHERE job_id = ?');
  return {
    async record(entry) {
      try {
        upsert.run(toRow(entry));
      } catch (err) {
        throw storeError('record', err);
      }
    },
    async get(jobId) {
      try {
        const row = byId.get(jobId) as Row | undefined;
        return row ? fromRow(row) : null;
      } catch (err) {
        throw storeError('get', err);
      }
    },
    async list(statuses, limit = 1000) {
      try {
        const where = statuses.length > 0 ? `WHERE status IN (${statuses.map(() => '?').join(', ')})` : '';
        const rows = raw
          .prepare(`SELECT * FROM write_log ${where} ORDER BY updated_at DESC, job_id DESC LIMIT ?`)
          .all(...statuses, limit) as Row[];
        return rows.map(fromRow);
      } catch (err) {
        throw storeError('list', err);
      }
    },
    close: async () => {},
  };
}

/**
 * Opens the write log in the mirror's SQLite file on a connection of its own (the commands that read only the
 * log; a process that also holds the store takes `sqliteWriteLog` over the store's connection), bringing the
 * schema to the latest migration first. `close()` closes that connection.
 */
export async function openSqliteWriteLog(path: string): Promise<WriteLog> {
  const { db, raw } = await openMigratedDatabase(path);
  let closing: Promise<void> | null = null;
  return {
    ...sqliteWriteLog(raw),
    close() {
      closing ??= (async () => {
        await db.destroy().catch(() => undefined);
        if (raw.open) raw.close();
      })();
      return closing;
    },
  };
}
