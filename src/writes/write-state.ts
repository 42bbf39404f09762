import { hasCode, UnderstudyError } from '../errors.js';
import type { BulkFailure, WriteLogEntry } from './write-log.js';
import { readProgress } from './write-progress.js';

/**
 * Where a write stands: `queued` (waiting for a worker, its turn on its record or its key's budget), `running`,
 * `retrying` (an attempt failed; the next one is scheduled), then one of the outcomes `ok`, `partial` (a bulk write
 * some records of which failed) or `failed`.
 */
export type WriteStateName = 'queued' | 'running' | 'retrying' | 'ok' | 'partial' | 'failed';

/** The outcomes: a write in one of these states will not change by itself. */
export const FINAL_WRITE_STATES: readonly WriteStateName[] = ['ok', 'partial', 'failed'];

/** Why a write failed (or its last attempt did): `code` such as `US_NOT_FOUND` (null when nothing recorded one). */
export interface WriteFailure {
  readonly code: string | null;
  /** The upstream's HTTP status, when it answered. */
  readonly status: number | null;
  readonly message: string;
}

/**
 * What the upstream answered a bulk write, as `writes show` has it in the job's result: how many records the
 * targets matched, were updated, would be (a dry run), were already so, and failed.
 */
export interface BulkSummary {
  readonly dryRun?: boolean;
  /** `published`, or the draft mechanism's target. */
  readonly versionTarget?: string;
  readonly matched?: number;
  readonly updated?: number;
  /** A dry run: how many would be updated. */
  readonly wouldUpdate?: number;
  readonly unchanged?: number;
  readonly failed?: number;
}

/** What `getWrite` and `waitForWrite` tell about one write job. */
export interface WriteState {
  readonly jobId: string;
  readonly state: WriteStateName;
  /** Whether `state` is an outcome (`ok`, `partial`, `failed`). */
  readonly done: boolean;
  readonly op: string | null;
  readonly tenant: string | null;
  readonly collection: string | null;
  /** The record an update or delete addresses. */
  readonly recordId: string | null;
  /** `ok`: the record written; for a create, the id the upstream gave it. */
  readonly resultId: string | null;
  /** How the write ended when it is worth saying, e.g. `found after unknown outcome`. */
  readonly note: string | null;
  /** Attempts that went (or may have gone) upstream. */
  readonly attempts: number;
  /** `failed`: why (`code` such as `US_NOT_FOUND`, the upstream status, the message); `retrying`: the last error. */
  readonly error: WriteFailure | null;
  /** `partial`: each record that failed. */
  readonly failures: readonly BulkFailure[] | null;
  /**
   * A bulk write that ran (`ok` or `partial`): the upstream's counts (`matched`, `updated`, `failed`, …); null for
   * other writes, before it ran, and once its job is gone (the write log keeps no counts).
   */
  readonly summary: BulkSummary | null;
  /** The name of the `serve` API token that enqueued the write; null for one enqueued otherwise (or whose job is gone). */
  readonly tokenName: string | null;
  readonly enqueuedAt: string | null;
  readonly finishedAt: string | null;
}

/** A write job as the queue holds it (BullMQ's state names), for `writeStateOf`. */
export interface QueuedWriteView {
  readonly id: string;
  /** BullMQ's state: waiting, delayed, prioritized, waiting-children, active, completed, failed, … */
  readonly queueState: string;
  readonly data: unknown;
  readonly progress: unknown;
  readonly returnvalue: unknown;
  readonly failedReason: string | null;
  readonly timestamp: number;
  readonly finishedOn: number | null;
}

const str = (x: unknown): string | null => (typeof x === 'string' ? x : null);

const SUMMARY_KEYS = ['dryRun', 'versionTarget', 'matched', 'updated', 'wouldUpdate', 'unchanged', 'failed'] as const;

/** The counts of a bulk write's result, as the job's return value holds them; null when it has none. */
function summaryOf(x: unknown): BulkSummary | null {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return null;
  const out: Record<string, unknown> = {};
  for (const k of SUMMARY_KEYS) {
    const v = (x as Record<string, unknown>)[k];
    if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string') out[k] = v;
  }
  return Object.keys(out).length > 0 ? (out as BulkSummary) : null;
}
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The state of a write from its job. */
export function writeStateOf(job: QueuedWriteView): WriteState {
  const p = readProgress(job.progress);
  const d = (typeof job.data === 'object' && job.data !== null ? job.data : {}) as Record<string, unknown>;
  const rv = (typeof job.returnvalue === 'object' && job.returnvalue !== null ? job.returnvalue : {}) as Record<
    string,
    unknown
  >;
  const state: WriteStateName =
    job.queueState === 'completed'
      ? rv.status === 'partial'
        ? 'partial'
        : 'ok'
      : job.queueState === 'failed'
        ? 'failed'
        : job.queueState === 'active'
          ? 'running'
          : p.attempts > 0
            ? 'retrying'
            : 'queued';
  const error =
    state === 'failed'
      ? (p.error ?? {
          // A job BullMQ failed itself (it stalled twice: the worker died mid-request) has no error of ours.
          code: p.sending || p.unknownOutcome ? 'US_OUTCOME_UNKNOWN' : null,
          status: null,
          message: job.failedReason ?? 'failed',
        })
      : state === 'retrying'
        ? (p.error ?? null)
        : null;
  return {
    jobId: job.id,
    state,
    done: FINAL_WRITE_STATES.includes(state),
    op: str(d.op),
    tenant: str(d.tenant),
    collection: str(d.collection),
    recordId: str(d.id),
    resultId: str(rv.resultId),
    note: str(rv.note),
    attempts: typeof rv.attempts === 'number' ? rv.attempts : p.attempts,
    error,
    failures: Array.isArray(rv.failures) ? (rv.failures as BulkFailure[]) : null,
    summary: state === 'ok' || state === 'partial' ? summaryOf(rv.summary) : null,
    tokenName: str(d.tokenName),
    enqueuedAt: iso(job.timestamp),
    finishedAt: state === 'ok' || state === 'partial' || state === 'failed' ? iso(job.finishedOn) : null,
  };
}

/** The state of a write whose job is gone (removed after its days in the queue), from its `write_log` row. */
export function writeStateFromLog(e: WriteLogEntry): WriteState {
  const state: WriteStateName = e.status === 'delayed' ? (e.attempts > 0 ? 'retrying' : 'queued') : e.status;
  return {
    jobId: e.jobId,
    state,
    done: FINAL_WRITE_STATES.includes(state),
    op: e.op,
    tenant: e.tenant,
    collection: e.collection,
    recordId: e.recordId,
    resultId: e.resultId,
    note: e.note,
    attempts: e.attempts,
    error:
      (state === 'failed' || state === 'retrying') && e.error
        ? { code: e.errorCode, status: e.upstreamStatus, message: e.error }
        : null,
    failures: e.failures,
    summary: null,
    tokenName: null,
    enqueuedAt: e.enqueuedAt,
    finishedAt: e.finishedAt,
  };
}

/**
 * `waitForWrite` ran out of time: the write is still `last.state`. `why`, when known, says why it has not moved
 * (`no worker is listening on the writes queue under prefix "understudy"`), and ends the message.
 */
export class WriteWaitTimeoutError extends UnderstudyError {
  constructor(
    readonly last: WriteState,
    readonly timeoutMs: number,
    readonly why: string | null = null,
  ) {
    super('US_TIMEOUT', `write ${last.jobId} is still ${last.state} after ${timeoutMs} ms${why ? `: ${why}` : ''}`);
  }
}

/**
 * Whether `err` is `waitForWrite` running out of time: `US_TIMEOUT` with the write's `last` state (the code is
 * public, docs/writes.md; a statement's own time limit, also `US_TIMEOUT`, carries no write).
 */
export const isWriteWaitTimeout = (err: unknown): err is WriteWaitTimeoutError =>
  hasCode(err, 'US_TIMEOUT') && 'last' in err;
