import { hasCode, isUnderstudyError } from '../errors.js';
import type { Logger } from '../log.js';
import { parkedBy } from '../partners/gate-parking.js';
import { COLLECTIONS, type CollectionSlug, isCollectionSlug } from '../vocabulary/collections.js';
import { isTenantSlug, type TenantSlug, tenantSlug } from '../vocabulary/ids.js';
import { type CollectionReport, LOCKED, type SyncMode } from './sync-collection.js';

/** One sync of one collection, as a queued job asks for it. */
export interface CollectionTarget {
  readonly tenant: TenantSlug;
  readonly collection: CollectionSlug;
  readonly mode: SyncMode;
}

/** What one collection sync reports: the sync core's report, as the queue keeps it. */
export type CollectionOutcome = Readonly<Omit<CollectionReport, 'errorCode'>>;

/**
 * Runs one collection sync. `stop` asks it to finish the page in flight, commit it and stop; `signal` cancels
 * at once (the request in flight is dropped, nothing of it committed).
 */
export type RunCollection = (
  data: CollectionTarget,
  opts: { readonly signal: AbortSignal; readonly stop: AbortSignal },
) => Promise<CollectionOutcome>;

/** The per tenant+collection lock, taken or not: when not, when to try again. */
export type CollectionLockAttempt =
  | { readonly held: true; readonly lock: { release(): Promise<void> } }
  | { readonly held: false; readonly retryInMs: number };

export interface CollectionJobDeps {
  readonly runCollection: RunCollection;
  /** Takes the tenant+collection lock across every process (renewed while held). */
  readonly takeLock: (data: CollectionTarget, log: Logger) => Promise<CollectionLockAttempt>;
  /** True while a collection this one reads from still has a pending job for the tenant. Default: never. */
  readonly prerequisitesPending?: (data: CollectionTarget, signal: AbortSignal) => Promise<boolean>;
  /** Aborts when the process shuts down: the page in flight finishes, then the job goes back to the queue. */
  readonly stopping: AbortSignal;
  /** Aborts when shutdown has taken too long: the request in flight is dropped. Default: never. */
  readonly hardStop?: AbortSignal;
  readonly log: Logger;
}

export type CollectionJobResult = CollectionOutcome & { readonly tenant: string; readonly mode: SyncMode };

/** What the queue does with a collection job. */
export type CollectionJobDecision =
  | { readonly kind: 'complete'; readonly result: CollectionJobResult }
  /** Back to the queue for `delayMs`, no attempt spent. */
  | {
      readonly kind: 'delay';
      readonly reason: 'prerequisites' | 'collection-busy' | 'hand-back';
      readonly delayMs: number;
    }
  /** Failed for good (a refused key, unreadable job data). */
  | { readonly kind: 'fail'; readonly message: string }
  /** Failed this time: the queue retries with backoff (`park`: the key's budget ran out; the worker parks the job). */
  | { readonly kind: 'retry' | 'park'; readonly error: unknown };

export const PREREQUISITE_WAIT_MS = 2000;
/** How soon a job whose collection another run holds is tried again. */
export const LOCKED_RETRY_MS = 5000;

/** Validates job data read back from Redis (anything may have been put there by another version). */
export function readCollectionTarget(raw: unknown): CollectionTarget | { readonly error: string } {
  const { tenant, collection, mode } = (raw ?? {}) as Record<string, unknown>;
  if (!isTenantSlug(tenant)) return { error: 'job data: tenant must be a tenant slug' };
  if (typeof collection !== 'string' || !isCollectionSlug(collection)) {
    return { error: `job data: collection must be one of ${COLLECTIONS.join(', ')}` };
  }
  if (mode !== 'full' && mode !== 'incremental') return { error: 'job data: mode must be full or incremental' };
  return { tenant: tenantSlug(tenant), collection, mode };
}

/**
 * What becomes of a collection job whose sync threw: handed back at shutdown, parked when the key's budget ran
 * out, failed for good when the key is refused, else retried by the queue.
 */
export function decideCollectionFailure(err: unknown, stopping: boolean): CollectionJobDecision {
  if (stopping) return { kind: 'delay', reason: 'hand-back', delayMs: 0 };
  if (parkedBy(err)) return { kind: 'park', error: err };
  if (hasCode(err, 'US_AUTH')) return { kind: 'fail', message: `key refused: ${err.message}` };
  return { kind: 'retry', error: err };
}

/**
 * Runs one collection job: waits for its prerequisites, takes the tenant+collection lock (a job finding it held
 * is delayed, not failed), runs the sync and decides what becomes of the job. `signal` cancels the run at once.
 */
export async function runCollectionJob(
  deps: CollectionJobDeps,
  job: { readonly id: string | undefined; readonly data: unknown; readonly attemptsMade: number },
  signal?: AbortSignal,
): Promise<CollectionJobDecision> {
  const data = readCollectionTarget(job.data);
  if ('error' in data) return { kind: 'fail', message: data.error };
  const log = deps.log.child({ jobId: job.id, tenant: data.tenant, collection: data.collection, mode: data.mode });
  if (await deps.prerequisitesPending?.(data, signal ?? new AbortController().signal)) {
    log.debug({ retryInMs: PREREQUISITE_WAIT_MS }, 'collections it references are still syncing; delayed');
    return { kind: 'delay', reason: 'prerequisites', delayMs: PREREQUISITE_WAIT_MS };
  }
  const attempt = await deps.takeLock(data, log);
  if (!attempt.held) {
    log.debug({ retryInMs: attempt.retryInMs }, 'collection busy in another job; delayed');
    return { kind: 'delay', reason: 'collection-busy', delayMs: attempt.retryInMs };
  }
  const cancel = [signal, deps.hardStop].filter((s): s is AbortSignal => s !== undefined);
  const run = cancel.length > 0 ? AbortSignal.any(cancel) : new AbortController().signal;
  try {
    const outcome = await deps.runCollection(data, { signal: run, stop: deps.stopping });
    // Another run (an inline `sync`, another host's worker) holds the collection's lease: try again later.
    if (outcome.skipped === LOCKED) {
      log.debug({ retryInMs: LOCKED_RETRY_MS }, 'collection held by another run; delayed');
      return { kind: 'delay', reason: 'collection-busy', delayMs: LOCKED_RETRY_MS };
    }
    // The sync core reports non-fatal failures on the collection; the queue retries them with backoff.
    if (outcome.error) throw new Error(outcome.error);
    // The sync core already logged the run's one outcome line; this is the job's view of it.
    const { fetched, inserted, updated, deleted, requests, ms } = outcome;
    const status = outcome.skipped ? 'skipped' : 'ok';
    log.debug({ status, fetched, inserted, updated, deleted, requests, ms }, 'collection sync finished');
    return { kind: 'complete', result: { ...outcome, tenant: data.tenant, mode: data.mode } };
  } catch (err) {
    const decision = decideCollectionFailure(err, deps.stopping.aborted);
    if (decision.kind === 'delay') log.info('shutting down: job handed back after the last committed page');
    else if (decision.kind === 'fail')
      log.error({ code: 'US_AUTH', reason: (err as Error).message }, 'key refused: job failed without retry');
    else if (decision.kind === 'retry') {
      const code = isUnderstudyError(err) ? err.code : undefined;
      log.warn({ attempt: job.attemptsMade + 1, code, reason: (err as Error).message }, 'collection sync failed');
    }
    return decision;
  } finally {
    await attempt.lock.release();
  }
}
