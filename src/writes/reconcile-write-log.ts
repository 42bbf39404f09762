import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import type { WriteLog, WriteLogEntry, WriteStatus } from './write-log.js';

/** A write job as the queue keeps it, as far as the sweep reads it (BullMQ's `Job` has all of it). */
export interface QueuedWriteJob {
  /** `waiting`, `delayed`, `active`, `completed`, `failed`… as the queue names them. */
  getState(): Promise<string>;
  readonly failedReason?: string | undefined;
  readonly finishedOn?: number | undefined;
  readonly returnvalue?: unknown;
}

/** The writes queue as the sweep sees it: the job of an id, or undefined/null when it is gone. */
export interface WriteJobLookup {
  getJob(jobId: string): Promise<QueuedWriteJob | undefined | null>;
}

/** What the sweep needs: the writes queue (to read each job's state) and the write log. */
export interface ReconcileDeps {
  readonly queue: WriteJobLookup;
  readonly writeLog: WriteLog;
  readonly log: Logger;
  readonly now?: () => number;
}

/** Rows that are not an outcome yet: the processor writes the outcome, unless its process died first. */
const PASSING: readonly WriteStatus[] = ['running', 'retrying', 'delayed'];

const WAITING_STATES = new Set(['waiting', 'delayed', 'prioritized', 'waiting-children']);

const outcomeOf = (rv: unknown): { status: 'ok' | 'partial'; resultId: string | null; note: string | null } => {
  const o = (typeof rv === 'object' && rv !== null ? rv : {}) as Record<string, unknown>;
  return {
    status: o.status === 'partial' ? 'partial' : 'ok',
    resultId: typeof o.resultId === 'string' ? o.resultId : null,
    note: typeof o.note === 'string' ? o.note : null,
  };
};

/** The rows a sweep looks at: those of `jobIds` still passing, or every passing row. */
async function passingRows(writeLog: WriteLog, jobIds?: readonly string[]): Promise<WriteLogEntry[]> {
  if (!jobIds) return writeLog.list(PASSING);
  const rows: WriteLogEntry[] = [];
  for (const id of jobIds) {
    const row = await writeLog.get(id);
    if (row && PASSING.includes(row.status)) rows.push(row);
  }
  return rows;
}

/** What a passing row becomes given its job's state in the queue; null when it stays as it is. */
function reconciled(
  row: WriteLogEntry,
  state: string,
  job: QueuedWriteJob | null | undefined,
  now: () => string,
): WriteLogEntry | null {
  const finishedAt = () => (job?.finishedOn ? new Date(job.finishedOn).toISOString() : now());
  if (state === 'failed') {
    return {
      ...row,
      status: 'failed',
      error: job?.failedReason || 'failed',
      errorCode: row.errorCode,
      finishedAt: finishedAt(),
      note: 'reconciled: the job failed while no worker could log it (e.g. a worker killed mid-write)',
    };
  }
  if (state === 'completed') {
    const o = outcomeOf(job?.returnvalue);
    return {
      ...row,
      status: o.status,
      resultId: o.resultId ?? row.resultId,
      error: null,
      errorCode: null,
      upstreamStatus: null,
      finishedAt: finishedAt(),
      note: o.note ?? 'reconciled: completed while no worker could log it',
    };
  }
  if (state === 'missing' || state === 'unknown') {
    return {
      ...row,
      status: 'failed',
      error: 'the job is no longer in the queue',
      finishedAt: now(),
      note: 'reconciled: job removed from the queue before its outcome was logged',
    };
  }
  if (row.status === 'running' && WAITING_STATES.has(state))
    return { ...row, status: 'delayed', note: 'the worker running it stopped mid-write: back in the queue' };
  return null;
}

/**
 * Brings `write_log` rows that still say `running`, `retrying` or `delayed` in line with their job when the process
 * that would have written the outcome died: a job BullMQ failed (a worker killed twice mid-write: "job stalled
 * more than allowable limit") is logged `failed` with its reason, a completed one `ok`/`partial`, a job no longer
 * in the queue `failed`, and a `running` row whose job went back to the queue (stalled once) `delayed`.
 * Rows of jobs that are active are left alone. `jobIds` limits the sweep to those jobs; returns the rows changed.
 */
export async function reconcileWriteLog(deps: ReconcileDeps, jobIds?: readonly string[]): Promise<number> {
  const now = () => new Date((deps.now ?? Date.now)()).toISOString();
  const rows = await passingRows(deps.writeLog, jobIds);
  let changed = 0;
  for (const row of rows) {
    try {
      const first = await deps.queue.getJob(row.jobId);
      const state = first ? await first.getState() : 'missing';
      // The job read before its state may predate the failure or completion the state reports (its reason and
      // return value not yet there): read it again once it is final.
      const job = state === 'failed' || state === 'completed' ? ((await deps.queue.getJob(row.jobId)) ?? first) : first;
      const next = reconciled(row, state, job, now);
      if (next) {
        await deps.writeLog.record({ ...next, updatedAt: now() });
        changed++;
        deps.log.warn({ jobId: row.jobId, was: row.status, now: next.status }, 'write_log reconciled with the queue');
      }
    } catch (err) {
      deps.log.warn({ jobId: row.jobId, err: describeError(err) }, 'write_log row not reconciled');
    }
  }
  return changed;
}
