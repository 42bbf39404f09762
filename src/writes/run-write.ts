import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import type { PartnersClient } from '../partners/partners-client.js';
import type { Store } from '../sync/store-port.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import type { WriteRetryPolicy } from './decide-write-retry.js';
import { JobRecord, type WriteJobView } from './job-record.js';
import type { RecordLine } from './record-line.js';
import { parseJobData } from './validate-write.js';
import { attemptWrite } from './write-attempt.js';
import { describeTarget, type WriteJobData } from './write-job.js';
import type { WriteLog, WriteLogEntry } from './write-log.js';
import type { WriteOutcome } from './write-outcome.js';
import { readProgress } from './write-progress.js';

/** What the worker knows about one configured tenant. */
export interface WriteTenant {
  readonly client: PartnersClient;
  readonly mirrorDrafts: boolean;
}

/** What running a write job needs: the tenant's client, the mirror, the write log and the record's line. */
export interface RunWriteDeps extends WriteRetryPolicy {
  /** The tenant's client (with the key's shared rate gate), or null when the tenant is not configured. */
  readonly tenantFor: (slug: string) => WriteTenant | null;
  readonly store: Store;
  readonly writeLog: WriteLog;
  readonly order: RecordLine;
  /** Moves a delayed job to waiting at once (the next write of a record, when the one before it is done). */
  readonly promote: (jobId: string) => Promise<void>;
  /** Brings a collection's mirror up to date after a bulk write. */
  readonly afterBulk: (tenant: string, collection: CollectionSlug, signal: AbortSignal) => Promise<void>;
  /** How long a write waits before looking again whether the one before it on its record is done. */
  readonly orderRecheckMs: number;
  /**
   * A write that would wait longer than `afterMs` for its key's budget goes back to the queue for `retryInMs`, so
   * one tenant's backlog does not hold every worker slot (its requests carry it: `parkingClient`).
   */
  readonly parking?: { readonly afterMs: number; readonly retryInMs: number };
  /** Whether writes of other tenants wait for a worker slot (parking a write only helps then). */
  readonly othersWaiting?: (tenant: string) => Promise<boolean>;
  /** Aborts when the process shuts down: a job in flight is handed back. */
  readonly stopping: AbortSignal;
  readonly log: Logger;
  readonly random?: () => number;
  readonly now?: () => number;
}

export type { WriteJobView } from './job-record.js';

/** What a completed write job returns (its queue return value). */
export type WriteJobResult = WriteOutcome & { readonly attempts: number };

/** Why a write goes back to the queue for a while. */
export type DelayReason = 'wait-for-order' | 'hand-back' | 'park' | 'wait-rate' | 'retry-after';

/** What the queue does with the job once the runner is done with it. */
export type WriteDecision =
  | { readonly kind: 'complete'; readonly result: WriteJobResult }
  /** Back to the queue for `delayMs`; no attempt of the queue's own is spent. */
  | { readonly kind: 'delay'; readonly reason: DelayReason; readonly delayMs: number }
  /** Failed for good: no further attempt. */
  | { readonly kind: 'fail'; readonly message: string };

/** The result of a completed write run again. */
export const ALREADY_APPLIED = 'already applied: not sent again';

/** A completed write run again (Retry on a completed job in a dashboard, a script calling job.retry): its result. */
function alreadyApplied(prior: WriteLogEntry): WriteJobResult {
  return prior.status === 'partial'
    ? { status: 'partial', resultId: null, failures: prior.failures ?? [], summary: {}, attempts: prior.attempts }
    : { status: 'ok', resultId: prior.resultId, note: ALREADY_APPLIED, attempts: prior.attempts };
}

/** The job data, or the failure of a job whose data cannot be read (nothing logged in `write_log`). */
async function readJobData(job: WriteJobView, log: Logger): Promise<WriteJobData | WriteDecision> {
  try {
    return await parseJobData(job.data);
  } catch (err) {
    const message = `job data: ${describeError(err)}`;
    log.error({ reason: describeError(err) }, 'write job data refused');
    await job.saveProgress({ ...readProgress(job.progress), error: { code: 'US_VALIDATION', status: null, message } });
    return { kind: 'fail', message };
  }
}

/**
 * Runs one write job: waits its turn on its record, applies the write, keeps the mirror in step, logs the outcome
 * to `write_log` and decides what becomes of the job (retries per `decideWriteRetry`). A job whose `write_log` row
 * already says it was applied completes without sending. `signal` cancels the attempt like a shutdown does.
 */
export async function runWrite(deps: RunWriteDeps, job: WriteJobView, signal?: AbortSignal): Promise<WriteDecision> {
  const log = deps.log.child({ jobId: job.id });
  const data = await readJobData(job, log);
  if ('kind' in data) return data;
  const progress = readProgress(job.progress);
  const rec = new JobRecord(deps, job, data, log, progress);
  // A completed write run again is not sent again: its write_log row says it was applied. Same job = same enqueue
  // time (a key reused after the job was removed is a new write).
  const prior = await deps.writeLog.get(job.id).catch(() => null);
  if (prior && (prior.status === 'ok' || prior.status === 'partial') && prior.enqueuedAt === rec.base.enqueuedAt) {
    log.warn({ target: describeTarget(data), status: prior.status }, 'write already applied: not sent again');
    return { kind: 'complete', result: alreadyApplied(prior) };
  }
  const tenant = deps.tenantFor(data.tenant);
  if (!tenant) {
    return rec.fail(`tenant "${data.tenant}" is not in the worker's config`, {
      attempts: progress.attempts,
      code: 'US_CONFIG',
      status: null,
    });
  }
  if (rec.target) {
    const turn = await deps.order.turn(rec.target, job.id, data.seq);
    if (!turn.first) {
      await rec.record('delayed', {
        attempts: progress.attempts,
        note: `waiting for job ${turn.ahead} on the same record`,
      });
      log.debug({ ahead: turn.ahead }, 'write waits for an earlier write of its record');
      return { kind: 'delay', reason: 'wait-for-order', delayMs: deps.orderRecheckMs };
    }
  }
  return attemptWrite(deps, rec, tenant, progress, signal);
}
