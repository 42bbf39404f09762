import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import { describeError, UpstreamError } from '../src/errors.js';
import type { Logger } from '../src/log.js';
import type { PartnersClient } from '../src/partners/partners-client.js';
import { backoffMs } from '../src/partners/retry-delay.js';
import type { Store } from '../src/store/store.js';
import type { WriteLog, WriteLogEntry, WriteStatus } from '../src/store/write-log.js';
import type { CollectionSlug } from '../src/vocabulary/collections.js';
import { applyWrite, naturalKeyOf, outcomeUnknown, type WriteOutcome } from '../src/writes/apply-write.js';
import { classifyFailure } from '../src/writes/classify-failure.js';
import { GateParkedError, withParking } from '../src/writes/gate-parking.js';
import type { RecordOrder, RecordTarget } from '../src/writes/record-order.js';
import { parseJobData } from '../src/writes/validate-write.js';
import { describeTarget, recordOf, routeOf, type WriteJobData } from '../src/writes/write-job.js';

/** What the worker knows about one configured tenant. */
export interface WriteTenant {
  readonly client: PartnersClient;
  readonly mirrorDrafts: boolean;
}

export interface WriteProcessorDeps {
  /** The tenant's client (with the key's shared rate gate), or null when the tenant is not configured. */
  readonly tenantFor: (slug: string) => WriteTenant | null;
  readonly store: Store;
  readonly writeLog: WriteLog;
  readonly order: RecordOrder;
  /** Moves a delayed job to waiting at once (the next write of a record, when the one before it is done). */
  readonly promote: (jobId: string) => Promise<void>;
  /** Brings a collection's mirror up to date after a bulk write. */
  readonly afterBulk: (tenant: string, collection: CollectionSlug, signal: AbortSignal) => Promise<void>;
  /** Attempts per write, the first included (config `writes.attempts`). */
  readonly attempts: number;
  /**
   * Bound on the total time a write spends on 429s (config `writes.maxRateLimitWaitMs`): past it, or when the
   * upstream asks for a wait that would go past it, the write fails. Default: no bound.
   */
  readonly maxRateLimitWaitMs?: number;
  /** Backoff between attempts: full jitter below min(maxMs, baseMs * 2^(n-1)). */
  readonly backoff: { readonly baseMs: number; readonly maxMs: number };
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

/** Kept in the job's `progress` across attempts (BullMQ itself makes one attempt per write; we count ours). */
export interface WriteProgress {
  /** Attempts that went (or may have gone) upstream. */
  readonly attempts: number;
  /** An attempt went out and no usable answer came. */
  readonly unknownOutcome: boolean;
  /** Set just before sending, cleared after: still set at the next start means the process died mid-request. */
  readonly sending: boolean;
  /** Time spent on 429s so far: attempts that ended in one, and the delays they asked for. */
  readonly rateWaitMs: number;
}

/** What a completed write job returns (its BullMQ return value). */
export type WriteJobResult = WriteOutcome & { readonly attempts: number };

const readProgress = (p: unknown): WriteProgress => {
  const o = (typeof p === 'object' && p !== null ? p : {}) as Record<string, unknown>;
  return {
    attempts: typeof o.attempts === 'number' && o.attempts >= 0 ? o.attempts : 0,
    unknownOutcome: o.unknownOutcome === true,
    sending: o.sending === true,
    rateWaitMs: typeof o.rateWaitMs === 'number' && o.rateWaitMs >= 0 ? o.rateWaitMs : 0,
  };
};

const iso = (ms: number) => new Date(ms).toISOString();

/** The result of a completed write run again. */
export const ALREADY_APPLIED = 'already applied: not sent again';

/**
 * The write processor: waits its turn on its record, applies the write, keeps the mirror in step and logs the
 * outcome to `write_log`. 429: delayed by Retry-After, no attempt spent, up to `maxRateLimitWaitMs` in total.
 * Network errors, 408, 425, 5xx, a 2xx cut off: delayed with exponential backoff and jitter while attempts last;
 * when the write may have been applied, a create is looked up before it is sent again, and one with no natural key
 * fails as outcome unknown. Every other answer: failed at once (`UnrecoverableError`) with the upstream's message.
 * A job whose `write_log` row already says it was applied completes without sending.
 */
export const applyWriteProcessor =
  (deps: WriteProcessorDeps) =>
  async (job: Job, token?: string, signal?: AbortSignal): Promise<WriteJobResult> => {
    const now = deps.now ?? Date.now;
    const jobId = job.id ?? '?';
    const log = deps.log.child({ jobId });
    let data: WriteJobData;
    try {
      data = await parseJobData(job.data);
    } catch (err) {
      log.error({ reason: describeError(err) }, 'write job data refused');
      throw new UnrecoverableError(`job data: ${describeError(err)}`);
    }
    const target: RecordTarget | null = (() => {
      const id = recordOf(data);
      return id === null ? null : { tenant: data.tenant, collection: data.collection, id };
    })();
    const progress = readProgress(job.progress);
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
    const delay = async (ms: number): Promise<never> => {
      await job.moveToDelayed(now() + Math.max(0, Math.round(ms)), token);
      throw new DelayedError();
    };
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
    ): Promise<never> => {
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
      throw new UnrecoverableError(message);
    };

    // A completed write run again (Retry on a completed job in a dashboard, a script calling job.retry) is not sent
    // again: its write_log row says it was applied. Same job = same enqueue time (a key reused after the job was
    // removed is a new write).
    const prior = await deps.writeLog.get(jobId).catch(() => null);
    if (prior && (prior.status === 'ok' || prior.status === 'partial') && prior.enqueuedAt === base.enqueuedAt) {
      log.warn({ target: describeTarget(data), status: prior.status }, 'write already applied: not sent again');
      const result: WriteJobResult =
        prior.status === 'partial'
          ? {
              status: 'partial',
              resultId: null,
              failures: prior.failures ?? [],
              summary: {},
              attempts: prior.attempts,
            }
          : { status: 'ok', resultId: prior.resultId, note: ALREADY_APPLIED, attempts: prior.attempts };
      return result;
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
        return delay(deps.orderRecheckMs);
      }
    }

    const attempt = progress.attempts + 1;
    const priorUnknown = progress.unknownOutcome || progress.sending;
    await job.updateProgress({
      attempts: attempt,
      unknownOutcome: priorUnknown,
      sending: true,
      rateWaitMs: progress.rateWaitMs,
    } satisfies WriteProgress);
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
          { signal: run, priorUnknown },
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
      return { ...outcome, attempts: attempt };
    } catch (err) {
      if (err instanceof DelayedError) throw err;
      const cls = classifyFailure(err);
      switch (cls.kind) {
        case 'aborted': {
          // Shutting down: hand the job back now; an attempt counts only if the request may have gone out.
          const unknown = err instanceof UpstreamError && err.outcome === 'unknown';
          await job.updateProgress({
            attempts: unknown ? attempt : attempt - 1,
            unknownOutcome: priorUnknown || unknown,
            sending: false,
            rateWaitMs: progress.rateWaitMs,
          } satisfies WriteProgress);
          await record('delayed', { attempts: unknown ? attempt : attempt - 1, note: 'handed back at shutdown' });
          log.info('shutting down: write handed back');
          return delay(0);
        }
        case 'rate': {
          const parked = err instanceof GateParkedError;
          // Parking waits for our own budget (bounded by its window); only the upstream's 429s count here.
          const rateWaitMs = parked ? progress.rateWaitMs : progress.rateWaitMs + (now() - started);
          const max = deps.maxRateLimitWaitMs;
          if (!parked && max !== undefined && rateWaitMs + cls.waitMs > max) {
            await job.updateProgress({
              attempts: attempt - 1,
              unknownOutcome: priorUnknown,
              sending: false,
              rateWaitMs,
            } satisfies WriteProgress);
            return fail(
              `rate limited: still 429 after ${Math.round(rateWaitMs)} ms of waiting, and the upstream asks for ` +
                `${cls.waitMs} ms more, past writes.maxRateLimitWaitMs (${max} ms)`,
              { attempts: attempt - 1, code: 'US_RATE_LIMITED', status: 429, startedAt, runMs: now() - started },
            );
          }
          await job.updateProgress({
            attempts: attempt - 1,
            unknownOutcome: priorUnknown,
            sending: false,
            rateWaitMs: parked ? rateWaitMs : rateWaitMs + cls.waitMs,
          } satisfies WriteProgress);
          await record('delayed', {
            attempts: attempt - 1,
            error: describeError(err),
            upstreamStatus: parked ? null : 429,
            note: parked
              ? `waiting for the key's write budget: back in ${cls.waitMs} ms`
              : `rate limited: retry in ${cls.waitMs} ms`,
            ...timing(),
          });
          if (parked) log.debug({ delayMs: cls.waitMs }, 'write budget exhausted: parked');
          else log.warn({ delayMs: cls.waitMs }, 'write rate limited: delayed without spending an attempt');
          return delay(cls.waitMs);
        }
        case 'retry': {
          const unknownOutcome = priorUnknown || cls.unknownOutcome;
          await job.updateProgress({
            attempts: attempt,
            unknownOutcome,
            sending: false,
            rateWaitMs: progress.rateWaitMs,
          } satisfies WriteProgress);
          if (unknownOutcome && data.op === 'create' && !naturalKeyOf(data)) {
            // Nothing to look it up by: sending it again could make a second record (docs/writes.md, rule 1).
            const err = outcomeUnknown(data, `attempt ${attempt} (${cls.message})`);
            return fail(err.message, {
              attempts: attempt,
              code: err.code,
              status: cls.status,
              startedAt,
              runMs: now() - started,
            });
          }
          if (attempt >= deps.attempts) {
            return fail(`gave up after ${attempt} attempt(s): ${cls.message}`, {
              attempts: attempt,
              code: cls.code,
              status: cls.status,
              startedAt,
              runMs: now() - started,
            });
          }
          const waitMs = backoffMs(attempt, deps.backoff.baseMs, deps.backoff.maxMs, deps.random ?? Math.random);
          await record('retrying', {
            attempts: attempt,
            error: cls.message,
            errorCode: cls.code,
            upstreamStatus: cls.status,
            note: `retry in ${waitMs} ms${unknownOutcome ? ' (outcome unknown)' : ''}`,
            ...timing(),
          });
          log.warn({ attempt, delayMs: waitMs, status: cls.status, unknownOutcome }, 'write failed; retrying');
          return delay(waitMs);
        }
        case 'final':
          await job.updateProgress({
            attempts: attempt,
            unknownOutcome: priorUnknown,
            sending: false,
            rateWaitMs: progress.rateWaitMs,
          } satisfies WriteProgress);
          return fail(cls.message, {
            attempts: attempt,
            code: cls.code,
            status: cls.status,
            startedAt,
            runMs: now() - started,
          });
      }
    }
  };
