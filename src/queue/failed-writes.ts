import type { Job } from 'bullmq';
import { UnderstudyError } from '../errors.js';
import { jobDataForRedis } from '../writes/exact-body.js';
import type { RecordOrder } from '../writes/record-order.js';
import { isRetryableFailure, isRetryablePartial } from '../writes/retryable-failure.js';
import { parseJobData } from '../writes/validate-write.js';
import { recordOf, type WriteJobData } from '../writes/write-job.js';
import type { BulkFailure, WriteLog, WriteLogEntry, WriteLogReader } from '../writes/write-log.js';
import { readProgress } from '../writes/write-progress.js';
import type { WriteState } from '../writes/write-state.js';
import { getWriteState } from './follow-write.js';
import { addWriteJob, type WriteQueueHandle } from './write-queue.js';

/** A write that did not fully succeed: a failed job, or a bulk write that completed as `partial`. */
export interface FailedWrite {
  readonly jobId: string;
  readonly status: 'failed' | 'partial';
  readonly tenant: string;
  readonly op: string;
  readonly collection: string;
  readonly recordId: string | null;
  readonly attempts: number;
  readonly reason: string;
  /** The error code (`US_NOT_FOUND`, …) when one was recorded. */
  readonly code: string | null;
  /** Whether a retry as it is can succeed (5xx, timeouts, rate limits, unknown outcomes); see `isRetryableFailure`. */
  readonly retryable: boolean;
  readonly failedAt: string | null;
  /** Bulk writes: each record that failed. */
  readonly failures: readonly BulkFailure[] | null;
  /** The name of the `serve` API token that enqueued it, when one did. */
  readonly tokenName: string | null;
}

const progressAttempts = (job: Job): number => {
  const p = job.progress as { attempts?: unknown } | undefined;
  return typeof p === 'object' && p !== null && typeof p.attempts === 'number' ? p.attempts : job.attemptsMade;
};

const dataOf = (job: Job): Partial<WriteJobData> => (job.data ?? {}) as Partial<WriteJobData>;

/** Failed write jobs (newest first) and bulk writes logged as partial, with their reasons. */
const REPLAYED = 'replayed as';

export async function listFailedWrites(
  queue: WriteQueueHandle,
  writeLog: WriteLogReader | null,
): Promise<FailedWrite[]> {
  const jobs = (await queue.getFailed(0, -1)).filter((j): j is Job => Boolean(j));
  const out: FailedWrite[] = [];
  for (const job of jobs) {
    const d = dataOf(job);
    // Why it failed: kept in the job's progress by the worker, else in its write_log row.
    const row = writeLog && job.id ? await writeLog.get(job.id) : null;
    const error =
      readProgress(job.progress).error ??
      (row?.errorCode ? { code: row.errorCode, status: row.upstreamStatus, message: row.error ?? '' } : null);
    out.push({
      jobId: job.id ?? '?',
      status: 'failed',
      tenant: String(d.tenant ?? '?'),
      op: String(d.op ?? job.name),
      collection: String(d.collection ?? '?'),
      recordId: 'id' in d && typeof d.id === 'string' ? d.id : null,
      attempts: progressAttempts(job),
      reason: job.failedReason ?? 'failed',
      code: error?.code ?? null,
      retryable: isRetryableFailure(error),
      failedAt: job.finishedOn ? new Date(job.finishedOn).toISOString() : null,
      failures: null,
      tokenName: typeof d.tokenName === 'string' ? d.tokenName : null,
    });
  }
  out.sort((a, b) => (b.failedAt ?? '').localeCompare(a.failedAt ?? ''));
  if (writeLog) {
    // A partial already replayed is settled: its replay is listed instead, should that fail in turn.
    for (const e of await writeLog.list(['partial'])) if (!e.note?.startsWith(REPLAYED)) out.push(fromPartial(e));
  }
  return out;
}

const fromPartial = (e: WriteLogEntry): FailedWrite => ({
  jobId: e.jobId,
  status: 'partial',
  tenant: e.tenant,
  op: e.op,
  collection: e.collection,
  recordId: e.recordId,
  attempts: e.attempts,
  reason: e.error ?? 'some records failed',
  code: e.errorCode,
  retryable: isRetryablePartial(e.failures),
  failedAt: e.finishedAt,
  failures: e.failures,
  tokenName: null,
});

/** Everything known about one write job: its state (as `getWrite` gives it), BullMQ's view and the `write_log` row. */
export interface WriteDetails extends WriteState {
  /** BullMQ's state of the job (`waiting`, `delayed`, `active`, `completed`, `failed`; `removed` once it is gone). */
  readonly queueState: string;
  readonly data: unknown;
  readonly progress: unknown;
  readonly failedReason: string | null;
  readonly result: unknown;
  readonly log: WriteLogEntry | null;
  /** What to check before retrying, when the write failed and may have been applied upstream. */
  readonly advice?: string;
}

/** What to check about a failed write that may have been applied (docs/writes.md, "Unknown outcomes"). */
function adviceFor(
  jobId: string,
  state: string,
  data: unknown,
  progress: unknown,
  log: WriteLogEntry | null,
): string | undefined {
  if (state !== 'failed' && log?.status !== 'failed') return undefined;
  const unknown =
    log?.errorCode === 'US_OUTCOME_UNKNOWN' ||
    (typeof progress === 'object' &&
      progress !== null &&
      ((progress as { unknownOutcome?: unknown }).unknownOutcome === true ||
        (progress as { sending?: unknown }).sending === true));
  if (!unknown) return undefined;
  const d = (data ?? {}) as { op?: unknown; collection?: unknown };
  const what = `${String(d.op ?? log?.op ?? 'write')} of ${String(d.collection ?? log?.collection ?? '?')}`;
  return (
    `This ${what} went out and no usable answer came back, so it may have been applied upstream. ` +
    'Check upstream whether the record exists (look it up in the upstream admin by the fields of `data.body`, or ' +
    'run `understudy sync --full` and query the mirror with `understudy sql QUERY`). If it exists, nothing is missing: ' +
    `leave the job failed. If it does not, \`understudy writes retry ${jobId}\` looks it up again (by slug or ` +
    `filename when the body has one) and \`understudy writes retry ${jobId} --resend\` sends it again without looking.`
  );
}

export async function showWrite(
  queue: WriteQueueHandle,
  writeLog: WriteLogReader | null,
  jobId: string,
): Promise<WriteDetails> {
  const state = await getWriteState(queue, jobId, writeLog);
  const job = await queue.getJob(jobId);
  const log = writeLog ? await writeLog.get(jobId) : null;
  const queueState = job ? await job.getState() : 'removed';
  const advice = adviceFor(jobId, queueState, job?.data, job?.progress, log);
  return {
    ...state,
    queueState,
    data: job?.data ?? null,
    progress: job?.progress ?? null,
    failedReason: job?.failedReason ?? null,
    result: job?.returnvalue ?? null,
    log,
    ...(advice ? { advice } : {}),
  };
}

export interface RetryResult {
  readonly jobId: string;
  /** `requeued`: the failed job runs again; `replayed`: a new bulk job for the records that failed. */
  readonly how: 'requeued' | 'replayed';
  /** The job that will run: the same id when requeued, a new one when replayed. */
  readonly runs: string;
}

/**
 * Queues a failed write again, behind every write already queued for its record, with a fresh attempt count.
 * An earlier unknown outcome is remembered (a create still looks for its record first) unless `resend`.
 * A bulk write that completed as partial is replayed as a new bulk write for the records that failed.
 */
export async function retryWrite(
  queue: WriteQueueHandle,
  order: RecordOrder,
  writeLog: WriteLog | null,
  jobId: string,
  opts: { readonly resend?: boolean } = {},
): Promise<RetryResult> {
  const job = await queue.getJob(jobId);
  if (!job) throw new UnderstudyError('US_NOT_FOUND', `no write job ${jobId} (failed jobs are kept for 90 days)`);
  const state = await job.getState();
  if (state === 'failed') {
    const data = await parseJobData(job.data);
    const p = (job.progress ?? {}) as { unknownOutcome?: unknown; sending?: unknown };
    await job.updateProgress({
      attempts: 0,
      // `sending`: the worker died mid-request (it stalled), so the write may have been applied.
      unknownOutcome: opts.resend ? false : p.unknownOutcome === true || p.sending === true,
      sending: false,
    });
    const seq = await order.nextSeq();
    const next: WriteJobData = { ...data, seq };
    await (job as Job).updateData(jobDataForRedis(next) as WriteJobData);
    const id = recordOf(data);
    if (id !== null) await order.join({ tenant: data.tenant, collection: data.collection, id }, jobId, seq);
    await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
    return { jobId, how: 'requeued', runs: jobId };
  }
  if (state === 'completed') {
    const data = await parseJobData(job.data);
    const failures = await partialFailures(job, writeLog);
    if (data.op === 'bulk' && failures.length > 0) {
      const { where: _w, all: _a, ids: _i, ...rest } = data.body;
      const { idempotencyKey: _k, seq: _s, ...base } = data;
      const replay: WriteJobData = { ...base, body: { ...rest, ids: failures.map((f) => f.id) } };
      const { jobId: runs } = await addWriteJob(queue, order, replay);
      const entry = writeLog ? await writeLog.get(jobId) : null;
      if (writeLog && entry) {
        await writeLog.record({ ...entry, note: `${REPLAYED} ${runs}`, updatedAt: new Date().toISOString() });
      }
      return { jobId, how: 'replayed', runs };
    }
  }
  throw new UnderstudyError('US_VALIDATION', `write job ${jobId} is ${state}, not failed: nothing to retry`);
}

async function partialFailures(job: Job, writeLog: WriteLogReader | null): Promise<readonly BulkFailure[]> {
  const rv = job.returnvalue as { status?: unknown; failures?: unknown } | null;
  if (rv && rv.status === 'partial' && Array.isArray(rv.failures)) return rv.failures as BulkFailure[];
  const entry = writeLog && job.id ? await writeLog.get(job.id) : null;
  return entry?.status === 'partial' ? (entry.failures ?? []) : [];
}
