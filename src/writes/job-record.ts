import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import type { JsonObject } from '../vocabulary/ids.js';
import type { RecordLine, RecordTarget } from './record-line.js';
import { describeTarget, recordOf, routeOf, type WriteJobData } from './write-job.js';
import type { WriteLog, WriteLogEntry, WriteStatus } from './write-log.js';
import type { WriteProgress } from './write-progress.js';

/** A write job as the queue holds it: what the runner reads, and the one thing it writes back (progress). */
export interface WriteJobView {
  readonly id: string;
  /** When it was enqueued (ms since the epoch). */
  readonly timestamp: number;
  readonly data: unknown;
  readonly progress: unknown;
  /** Keeps the job's progress across attempts and restarts. */
  saveProgress(progress: WriteProgress): Promise<void>;
}

/** What the bookkeeping of a write job needs: the write log, the record's line, and a clock. */
export interface JobRecordDeps {
  readonly writeLog: WriteLog;
  readonly order: RecordLine;
  /** Moves a delayed job to waiting at once (the next write of a record, when the one before it is done). */
  readonly promote: (jobId: string) => Promise<void>;
  readonly now?: () => number;
}

/** A write failed for good, as the write log and the job's progress keep it. */
export interface FailureFields {
  readonly attempts: number;
  readonly code: string;
  readonly status: number | null;
  readonly startedAt?: string;
  readonly runMs?: number;
}

/** What the queue does with a job that failed for good. */
export interface FailDecision {
  readonly kind: 'fail';
  readonly message: string;
}

export const iso = (ms: number): string => new Date(ms).toISOString();

/** The `write_log` fields of a job that no run changes: who, what, where, and when it was enqueued. */
const baseOf = (jobId: string, data: WriteJobData, target: RecordTarget | null, enqueuedAt: number) => ({
  jobId,
  tenant: data.tenant,
  op: data.op,
  collection: data.collection,
  recordId: target?.id ?? null,
  method: routeOf(data).method,
  draft: 'draft' in data && data.draft === true,
  idempotencyKey: data.idempotencyKey ?? null,
  enqueuedAt: iso(enqueuedAt),
});

const targetOf = (data: WriteJobData): RecordTarget | null => {
  const id = recordOf(data);
  return id === null ? null : { tenant: data.tenant, collection: data.collection, id };
};

/**
 * One write job's bookkeeping while it runs: its progress (saved on the job), its `write_log` row, and its place
 * in its record's line.
 */
export class JobRecord {
  /** The record the write addresses (its line), or null for creates and bulk writes. */
  readonly target: RecordTarget | null;
  readonly base: ReturnType<typeof baseOf>;
  readonly now: () => number;
  /** The progress last saved: a failure adds its error to it, for `getWrite`. */
  private latest: WriteProgress;

  constructor(
    private readonly deps: JobRecordDeps,
    readonly job: WriteJobView,
    readonly data: WriteJobData,
    readonly log: Logger,
    progress: WriteProgress,
  ) {
    this.target = targetOf(data);
    this.base = baseOf(job.id, data, this.target, job.timestamp);
    this.now = deps.now ?? Date.now;
    this.latest = progress;
  }

  /** The job's progress as last read or saved. */
  get progress(): WriteProgress {
    return this.latest;
  }

  /** Saves the job's progress; what a sequence saved (`sequence`) stays unless `p` replaces it. */
  async save(p: WriteProgress): Promise<void> {
    const sequence = p.sequence ?? this.latest.sequence;
    const next = sequence ? { ...p, sequence } : p;
    this.latest = next;
    await this.job.saveProgress(next);
  }

  /** Saves what a versioned update's sequence needs should its attempt be cut off (`WriteProgress.sequence`). */
  saveSequence(sequence: JsonObject): Promise<void> {
    return this.save({ ...this.latest, sequence });
  }

  /** Writes the job's `write_log` row; a failure to is logged, never thrown. */
  record(status: WriteStatus, fields: Partial<WriteLogEntry> & { attempts: number }): Promise<void> {
    return this.deps.writeLog
      .record({
        ...this.base,
        status,
        error: null,
        errorCode: null,
        upstreamStatus: null,
        failures: null,
        resultId: null,
        note: null,
        startedAt: null,
        finishedAt: null,
        waitMs: null,
        runMs: null,
        updatedAt: iso(this.now()),
        ...fields,
      })
      .catch((err: unknown) => this.log.warn({ err: describeError(err) }, 'write_log not updated'));
  }

  /** Takes the job out of its record's line and wakes the next write of that record. */
  async leaveLine(): Promise<void> {
    if (!this.target) return;
    try {
      const next = await this.deps.order.leave(this.target, this.job.id);
      if (next) await this.deps.promote(next);
    } catch (err) {
      // The next write finds its way on its own recheck.
      this.log.warn({ err: describeError(err) }, 'could not wake the next write of the record');
    }
  }

  /** The job failed for good: its error saved and logged, its record's line left. */
  async fail(message: string, fields: FailureFields): Promise<FailDecision> {
    await this.save({ ...this.latest, error: { code: fields.code, status: fields.status, message } });
    await this.record('failed', {
      attempts: fields.attempts,
      error: message,
      errorCode: fields.code,
      upstreamStatus: fields.status,
      finishedAt: iso(this.now()),
      ...(fields.startedAt ? { startedAt: fields.startedAt } : {}),
      ...(fields.runMs !== undefined ? { runMs: fields.runMs } : {}),
    });
    await this.leaveLine();
    this.log.error({ target: describeTarget(this.data), attempts: fields.attempts, reason: message }, 'write failed');
    return { kind: 'fail', message };
  }
}
