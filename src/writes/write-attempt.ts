import { describeError } from '../errors.js';
import { parkingClient } from '../partners/gate-parking.js';
import { applyWrite, naturalKeyOf, outcomeUnknown } from './apply-write.js';
import { classifyFailure } from './classify-failure.js';
import { decideWriteRetry, type RetryDecision } from './decide-write-retry.js';
import { iso, type JobRecord } from './job-record.js';
import type { RunWriteDeps, WriteDecision, WriteTenant } from './run-write.js';
import { type CreateJob, describeTarget } from './write-job.js';
import type { WriteOutcome } from './write-outcome.js';
import type { WriteProgress } from './write-progress.js';

/** One attempt at sending a write: its number, and when it started. */
interface Attempt {
  readonly number: number;
  /** An earlier attempt went out without a usable answer. */
  readonly priorUnknown: boolean;
  readonly rateWaitMs: number;
  readonly started: number;
  readonly startedAt: string;
}

/** The attempt's timing fields of the write log. */
const timing = (rec: JobRecord, a: Attempt) => ({
  startedAt: a.startedAt,
  waitMs: a.started - rec.job.timestamp,
  runMs: rec.now() - a.started,
});

/** The note the write log keeps for a write that goes back to the queue after a failed attempt. */
const delayNote = (d: RetryDecision & { kind: 'park' | 'wait-rate' | 'retry-after' }): string => {
  if (d.kind === 'park') return `waiting for the key's write budget: back in ${d.delayMs} ms`;
  if (d.kind === 'wait-rate') return `rate limited: retry in ${d.delayMs} ms`;
  return `retry in ${d.delayMs} ms${d.progress.unknownOutcome ? ' (outcome unknown)' : ''}`;
};

/** Applies the write upstream and in the mirror, parked instead of waiting long for its key's budget. */
function send(deps: RunWriteDeps, rec: JobRecord, tenant: WriteTenant, a: Attempt, run: AbortSignal) {
  const { data, log } = rec;
  const { parking, othersWaiting } = deps;
  const worthIt = othersWaiting ? { worthIt: () => othersWaiting(data.tenant) } : {};
  return applyWrite(
    {
      client: parking ? parkingClient(tenant.client, { ...parking, ...worthIt }) : tenant.client,
      store: deps.store,
      log,
      mirrorDrafts: tenant.mirrorDrafts,
      afterBulk: (collection, s) => deps.afterBulk(data.tenant, collection, s),
    },
    data,
    {
      signal: run,
      priorUnknown: a.priorUnknown,
      jobId: rec.job.id,
      checkpoint: { saved: rec.progress.sequence ?? null, save: (state) => rec.saveSequence(state) },
    },
  );
}

/** A write applied: its outcome into the write log, its record's line left. */
async function applied(rec: JobRecord, a: Attempt, outcome: WriteOutcome): Promise<WriteDecision> {
  await rec.record(outcome.status, {
    attempts: a.number,
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
    finishedAt: iso(rec.now()),
    ...timing(rec, a),
  });
  await rec.leaveLine();
  rec.log.info(
    { target: describeTarget(rec.data), status: outcome.status, attempts: a.number, ms: rec.now() - a.started },
    'write applied',
  );
  return { kind: 'complete', result: { ...outcome, attempts: a.number } };
}

/** What a failed attempt leads to, by `decideWriteRetry`; the progress it leaves saved on the job. */
async function decideAfter(deps: RunWriteDeps, rec: JobRecord, a: Attempt, err: unknown): Promise<RetryDecision> {
  const decision = decideWriteRetry(
    classifyFailure(err),
    {
      attempt: a.number,
      priorUnknown: a.priorUnknown,
      rateWaitMs: a.rateWaitMs,
      elapsedMs: rec.now() - a.started,
      createWithoutNaturalKey: rec.data.op === 'create' && !naturalKeyOf(rec.data),
    },
    deps,
    deps.random ?? Math.random,
  );
  await rec.save(
    decision.kind === 'retry-after'
      ? { ...decision.progress, error: { code: decision.code, status: decision.status, message: decision.message } }
      : decision.progress,
  );
  return decision;
}

/** A write back to the queue without spending an attempt: its budget or the upstream's rate limit. */
async function waitFor(
  rec: JobRecord,
  a: Attempt,
  decision: RetryDecision & { kind: 'park' | 'wait-rate' },
  err: unknown,
): Promise<WriteDecision> {
  await rec.record('delayed', {
    attempts: decision.progress.attempts,
    error: describeError(err),
    upstreamStatus: decision.kind === 'park' ? null : 429,
    note: delayNote(decision),
    ...timing(rec, a),
  });
  if (decision.kind === 'park') rec.log.debug({ delayMs: decision.delayMs }, 'write budget exhausted: parked');
  else rec.log.warn({ delayMs: decision.delayMs }, 'write rate limited: delayed without spending an attempt');
  return { kind: 'delay', reason: decision.kind, delayMs: decision.delayMs };
}

/** A failed attempt to be tried again after the decision's delay. */
async function retryLater(
  rec: JobRecord,
  a: Attempt,
  decision: RetryDecision & { kind: 'retry-after' },
): Promise<WriteDecision> {
  await rec.record('retrying', {
    attempts: decision.progress.attempts,
    error: decision.message,
    errorCode: decision.code,
    upstreamStatus: decision.status,
    note: delayNote(decision),
    ...timing(rec, a),
  });
  rec.log.warn(
    {
      attempt: a.number,
      delayMs: decision.delayMs,
      status: decision.status,
      unknownOutcome: decision.progress.unknownOutcome,
    },
    'write failed; retrying',
  );
  return { kind: 'delay', reason: 'retry-after', delayMs: decision.delayMs };
}

type FailDetail = Parameters<JobRecord['fail']>[1];

/** Fails the job for good after `attempts`, with the attempt's timing. */
function failFinal(
  rec: JobRecord,
  a: Attempt,
  attempts: number,
  status: FailDetail['status'],
  message: string,
  code: FailDetail['code'],
): ReturnType<JobRecord['fail']> {
  return rec.fail(message, { attempts, code, status, startedAt: a.startedAt, runMs: rec.now() - a.started });
}

/** What becomes of the job after a failed attempt: handed back, delayed, retried, or failed for good. */
async function afterFailure(deps: RunWriteDeps, rec: JobRecord, a: Attempt, err: unknown): Promise<WriteDecision> {
  const decision = await decideAfter(deps, rec, a, err);
  const attempts = decision.progress.attempts;
  switch (decision.kind) {
    case 'hand-back':
      await rec.record('delayed', { attempts, note: 'handed back at shutdown' });
      rec.log.info('shutting down: write handed back');
      return { kind: 'delay', reason: 'hand-back', delayMs: 0 };
    case 'park':
    case 'wait-rate':
      return waitFor(rec, a, decision, err);
    case 'retry-after':
      return retryLater(rec, a, decision);
    case 'fail-unknown-outcome': {
      const unknown = outcomeUnknown(rec.data as CreateJob, decision.what);
      return failFinal(rec, a, attempts, decision.status, unknown.message, unknown.code);
    }
    case 'fail-final':
      return failFinal(rec, a, attempts, decision.status, decision.message, decision.code);
  }
}

/**
 * Sends the write once: the attempt counted and marked as sending first (a crash meanwhile leaves its outcome
 * unknown), then the outcome logged, or the failure turned into what becomes of the job.
 */
export async function attemptWrite(
  deps: RunWriteDeps,
  rec: JobRecord,
  tenant: WriteTenant,
  progress: WriteProgress,
  signal?: AbortSignal,
): Promise<WriteDecision> {
  const number = progress.attempts + 1;
  const priorUnknown = progress.unknownOutcome || progress.sending;
  await rec.save({ attempts: number, unknownOutcome: priorUnknown, sending: true, rateWaitMs: progress.rateWaitMs });
  const started = rec.now();
  const a: Attempt = { number, priorUnknown, rateWaitMs: progress.rateWaitMs, started, startedAt: iso(started) };
  await rec.record('running', { attempts: number, startedAt: a.startedAt, waitMs: started - rec.job.timestamp });
  const run = AbortSignal.any(signal ? [deps.stopping, signal] : [deps.stopping]);
  try {
    return await applied(rec, a, await send(deps, rec, tenant, a, run));
  } catch (err) {
    return afterFailure(deps, rec, a, err);
  }
}
