/**
 * The write log port: where each write job's latest state is kept (the write state machine records it, the sweep
 * reconciles it, `understudy writes` reads it). `src/store/write-log.ts` implements it over the mirror's SQLite file.
 */

/** Where a write job stands. `running`, `retrying` and `delayed` are passing states; the rest are outcomes. */
/**
 * Where a write job stands, as `write_log.status` holds it: `running`, `retrying` and `delayed` are passing states;
 * the rest are outcomes. docs/schema.md lists these (a test compares the two).
 */
export const WRITE_STATUSES = ['running', 'retrying', 'delayed', 'ok', 'partial', 'failed'] as const;
export type WriteStatus = (typeof WRITE_STATUSES)[number];

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

/** What the commands that only read the log use of it (`understudy writes failed|show`). */
export type WriteLogReader = Pick<WriteLog, 'get' | 'list'>;
