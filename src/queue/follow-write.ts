import { setTimeout as sleep } from 'node:timers/promises';
import { UnderstudyError } from '../errors.js';
import type { WriteLogReader } from '../writes/write-log.js';
import { type WriteState, WriteWaitTimeoutError, writeStateFromLog, writeStateOf } from '../writes/write-state.js';
import { noWorkerOn } from './workers-listening.js';
import type { WriteQueueHandle } from './write-queue.js';

export interface WaitForWriteOptions {
  /** Give up after this many ms with `WriteWaitTimeoutError` (code `US_TIMEOUT`); default: no limit. */
  readonly timeoutMs?: number;
  /** Stops waiting (rejects with the signal's reason). */
  readonly signal?: AbortSignal;
}

/**
 * The state of one write job: from the queue while it holds the job, else from its `write_log` row when a log is
 * given. Throws `UnderstudyError` `US_NOT_FOUND` when neither knows it.
 */
export async function getWriteState(
  queue: WriteQueueHandle,
  jobId: string,
  writeLog: WriteLogReader | null = null,
): Promise<WriteState> {
  if (typeof jobId !== 'string' || jobId === '')
    throw new UnderstudyError('US_VALIDATION', 'jobId must be a non-empty string (the id enqueue returned)');
  // The state first, then the job: a job read before its state could have completed in between, and would then
  // say completed with no return value yet.
  const queueState = await queue.getJobState(jobId);
  const job = queueState === 'unknown' ? undefined : await queue.getJob(jobId);
  if (job && queueState !== 'unknown') {
    return writeStateOf({
      id: jobId,
      queueState,
      data: job.data,
      progress: job.progress,
      returnvalue: job.returnvalue,
      failedReason: job.failedReason ?? null,
      timestamp: job.timestamp,
      finishedOn: job.finishedOn ?? null,
    });
  }
  const row = writeLog ? await writeLog.get(jobId) : null;
  if (row) return writeStateFromLog(row);
  throw new UnderstudyError('US_NOT_FOUND', `no write job ${jobId} (completed jobs are kept 7 days, failed ones 90)`);
}

/**
 * Resolves with the write's final state (`ok`, `partial` or `failed`), looking at it every 100 ms at first and
 * then less often (at most every second); rejects with `WriteWaitTimeoutError` after `timeoutMs`.
 */
export async function waitForWriteState(
  queue: WriteQueueHandle,
  jobId: string,
  opts: WaitForWriteOptions = {},
  writeLog: WriteLogReader | null = null,
): Promise<WriteState> {
  const { timeoutMs, signal } = opts;
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && timeoutMs >= 0))
    throw new UnderstudyError('US_VALIDATION', 'timeoutMs must be a number of milliseconds, 0 or more');
  const deadline = timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + timeoutMs;
  for (let pause = 100; ; pause = Math.min(1000, pause * 1.5)) {
    const state = await getWriteState(queue, jobId, writeLog);
    if (state.done) return state;
    const left = deadline - Date.now();
    if (left <= 0) {
      // A write still queued with no worker on its queue (another prefix, none started) is the usual reason.
      const why = state.state === 'queued' ? await noWorkerOn(queue) : null;
      throw new WriteWaitTimeoutError(state, timeoutMs ?? 0, why);
    }
    await sleep(Math.min(pause, left), undefined, signal ? { signal } : {});
  }
}
