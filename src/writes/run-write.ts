import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import { withParking } from '../partners/gate-parking.js';
import type { PartnersClient } from '../partners/partners-client.js';
import type { Store } from '../sync/store-port.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import { applyWrite, naturalKeyOf, outcomeUnknown, type WriteOutcome } from './apply-write.js';
import { classifyFailure } from './classify-failure.js';
import { decideWriteRetry, type RetryDecision, type WriteRetryPolicy } from './decide-write-retry.js';
import type { RecordLine, RecordTarget } from './record-line.js';
import { parseJobData } from './validate-write.js';
import { type CreateJob, describeTarget, recordOf, routeOf, type WriteJobData } from './write-job.js';
import type { WriteLog, WriteLogEntry, WriteStatus } from './write-log.js';
import { readProgress, type WriteProgress } from './write-progress.js';

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
   * one tenant's backlog does not hold every worker slot (needs gates wrapped with `parkableGate`).
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

const iso = (ms: number) => new Date(ms).toISOString();

/** The note the write log keeps for a write that goes back to the queue after a failed attempt. */
const delayNote = (d: RetryDecision & { kind: 'park' | 'wait-rate' | 'retry-after' }): string => {
  if (d.kind === 'park') return `waiting for the key's write budget: back in ${d.delayMs} ms`;
  if (d.kind === 'wait-rate') return `rate limited: retry in ${d.delayMs} ms`;
  return `retry in ${d.delayMs} ms${d.progress.unknownOutcome ? ' (outcome unknown)' : ''}`;
};

/**
 * Runs one write job: waits its turn on its record, applies the write, keeps the mirror in step, logs the outcome
 * to `write_log` and decides what becomes of the job (retries per `decideWriteRetry`). A job whose `write_log` row
 * already says it was applied completes without sending. `signal` cancels the attempt like a shutdown does.
 */
export async function runWrite(deps: RunWriteDeps, job: WriteJobView, signal?: AbortSignal): Promise<WriteDecision> {
  const now = deps.now ?? Date.now;
  const jobId = job.id;
  const log = deps.log.child({ jobId });
  let data: WriteJobData;
  try {
    data = await parseJobData(job.data);
  } catch (err) {
    const message = `job data: ${describeError(err)}`;
    log.error({ reason: describeError(err) }, 'write job data refused');
    await job.saveProgress({ ...readProgress(job.progress), error: { code: 'US_VALIDATION', status: null, message } });
    return { kind: 'fail', message };
  }
  const target: RecordTarget | null = (() => {
    const id = recordOf(data);
    return id === null ? null : { tenant: data.tenant, collection: data.collection, id };
  })();
  const progress = readProgress(job.progress);
  /** The progress last saved: a failure adds its error to it, for `getWrite`. */
  let latest: WriteProgress = progress;
  const save = async (p: WriteProgress) => {
    latest = p;
    await job.saveProgress(p);
  };
  const base = {
    jobId,
    tenant: data.tenant,
    op: data.op,
    collection: data.collection,
    recordId: target?.id ?? null,
    method: routeOf(data).method,
    draft: 'draft' in data && data.draft === true,
    idempotencyKey: data.idempotencyKey ?? null,
    enqueuedAt: iso(job.timestamp),
  };
  const record = (status: WriteStatus, fields: Partial<WriteLogEntry> & { attempts: number }) =>
    deps.writeLog
      .record({
        ...base,
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
        updatedAt: iso(now()),
        ...fields,
      })
      .catch((err: unknown) => log.warn({ err: describeError(err) }, 'write_log not updated'));
  /** Takes the job out of its record's line and wakes the next write of that record. */
  const leaveLine = async () => {
    if (!target) return;
    try {
      const next = await deps.order.leave(target, jobId);
      if (next) await deps.promote(next);
    } catch (err) {
      // The next write finds its way on its own recheck.
      log.warn({ err: describeError(err) }, 'could not wake the next write of the record');
    }
  };
  const fail = async (
    message: string,
    fields: { attempts: number; code: string; status: number | null; startedAt?: string; runMs?: number },
  ): Promise<WriteDecision> => {
    await save({ ...latest, error: { code: fields.code, status: fields.status, message } });
    await record('failed', {
      attempts: fields.attempts,
      error: message,
      errorCode: fields.code,
      upstreamStatus: fields.status,
      finishedAt: iso(now()),
      ...(fields.startedAt ? { startedAt: fields.startedAt } : {}),
      ...(fields.runMs !== undefined ? { runMs: fields.runMs } : {}),
    });
    await leaveLine();
    log.error({ target: describeTarget(data), attempts: fields.attempts, reason: message }, 'write failed');
    return { kind: 'fail', message };
  };

  // A completed write run again (Retry on a completed job in a dashboard, a script calling job.retry) is not sent
  // again: its write_log row says it was applied. Same job = same enqueue time (a key reused after the job was
  // removed is a new write).
  const prior = await deps.writeLog.get(jobId).catch(() => null);
  if (prior && (prior.status === 'ok' || prior.status === 'partial') && prior.enqueuedAt === base.enqueuedAt) {
    log.warn({ target: describeTarget(data), status: prior.status }, 'write already applied: not sent again');
    const result: WriteJobResult =
      prior.status === 'partial'
        ? { status: 'partial', resultId: null, failures: prior.failures ?? [], summary: {}, attempts: prior.attempts }
        : { status: 'ok', resultId: prior.resultId, note: ALREADY_APPLIED, attempts: prior.attempts };
    return { kind: 'complete', result };
  }

  const tenant = deps.tenantFor(data.tenant);
  if (!tenant) {
    return fail(`tenant "${data.tenant}" is not in the worker's config`, {
      attempts: progress.attempts,
      code: 'US_CONFIG',
      status: null,
    });
  }
  if (target) {
    const turn = await deps.order.turn(target, jobId, data.seq);
    if (!turn.first) {
      await record('delayed', {
        attempts: progress.attempts,
        note: `waiting for job ${turn.ahead} on the same record`,
      });
      log.debug({ ahead: turn.ahead }, 'write waits for an earlier write of its record');
      return { kind: 'delay', reason: 'wait-for-order', delayMs: deps.orderRecheckMs };
    }
  }

  const attempt = progress.attempts + 1;
  const priorUnknown = progress.unknownOutcome || progress.sending;
  await save({ attempts: attempt, unknownOutcome: priorUnknown, sending: true, rateWaitMs: progress.rateWaitMs });
  const started = now();
  const startedAt = iso(started);
  const timing = () => ({ startedAt, waitMs: started - job.timestamp, runMs: now() - started });
  await record('running', { attempts: attempt, startedAt, waitMs: started - job.timestamp });
  const run = AbortSignal.any(signal ? [deps.stopping, signal] : [deps.stopping]);
  try {
    const apply = () =>
      applyWrite(
        {
          client: tenant.client,
          store: deps.store,
          log,
          mirrorDrafts: tenant.mirrorDrafts,
          afterBulk: (collection, s) => deps.afterBulk(data.tenant, collection, s),
        },
        data,
        { signal: run, priorUnknown, jobId },
      );
    const { parking, othersWaiting } = deps;
    const outcome = parking
      ? await withParking(
          { ...parking, ...(othersWaiting ? { worthIt: () => othersWaiting(data.tenant) } : {}) },
          apply,
        )
      : await apply();
    await record(outcome.status, {
      attempts: attempt,
      resultId: outcome.resultId,
      note:
        [
          outcome.status === 'ok' ? outcome.note : undefined,
          outcome.mirrorError ? `mirror: ${outcome.mirrorError}` : undefined,
        ]
          .filter(Boolean)
          .join('; ') || null,
      failures: outcome.status === 'partial' ? outcome.failures : null,
      ...(outcome.status === 'partial'
        ? { error: `${outcome.failures.length} record(s) failed: ${outcome.failures.map((f) => f.id).join(', ')}` }
        : {}),
      finishedAt: iso(now()),
      ...timing(),
    });
    await leaveLine();
    log.info(
      { target: describeTarget(data), status: outcome.status, attempts: attempt, ms: now() - started },
      'write applied',
    );
    return { kind: 'complete', result: { ...outcome, attempts: attempt } };
  } catch (err) {
    const cls = classifyFailure(err);
    const decision = decideWriteRetry(
      cls,
      {
        attempt,
        priorUnknown,
        rateWaitMs: progress.rateWaitMs,
        elapsedMs: now() - started,
        createWithoutNaturalKey: data.op === 'create' && !naturalKeyOf(data),
      },
      deps,
      deps.random ?? Math.random,
    );
    await save(
      decision.kind === 'retry-after'
        ? { ...decision.progress, error: { code: decision.code, status: decision.status, message: decision.message } }
        : decision.progress,
    );
    const attempts = decision.progress.attempts;
    switch (decision.kind) {
      case 'hand-back':
        await record('delayed', { attempts, note: 'handed back at shutdown' });
        log.info('shutting down: write handed back');
        return { kind: 'delay', reason: 'hand-back', delayMs: 0 };
      case 'park':
      case 'wait-rate':
        await record('delayed', {
          attempts,
          error: describeError(err),
          upstreamStatus: decision.kind === 'park' ? null : 429,
          note: delayNote(decision),
          ...timing(),
        });
        if (decision.kind === 'park') log.debug({ delayMs: decision.delayMs }, 'write budget exhausted: parked');
        else log.warn({ delayMs: decision.delayMs }, 'write rate limited: delayed without spending an attempt');
        return { kind: 'delay', reason: decision.kind, delayMs: decision.delayMs };
      case 'retry-after':
        await record('retrying', {
          attempts,
          error: decision.message,
          errorCode: decision.code,
          upstreamStatus: decision.status,
          note: delayNote(decision),
          ...timing(),
        });
        log.warn(
          {
            attempt,
            delayMs: decision.delayMs,
            status: decision.status,
            unknownOutcome: decision.progress.unknownOutcome,
          },
          'write failed; retrying',
        );
        return { kind: 'delay', reason: 'retry-after', delayMs: decision.delayMs };
      case 'fail-unknown-outcome': {
        const unknown = outcomeUnknown(data as CreateJob, decision.what);
        return fail(unknown.message, {
          attempts,
          code: unknown.code,
          status: decision.status,
          startedAt,
          runMs: now() - started,
        });
      }
      case 'fail-final':
        return fail(decision.message, {
          attempts,
          code: decision.code,
          status: decision.status,
          startedAt,
          runMs: now() - started,
        });
    }
  }
}
