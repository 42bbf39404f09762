import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import type { Redis } from 'ioredis';
import { isUnderstudyError } from '../src/errors.js';
import type { Logger } from '../src/log.js';
import { collectionLockKey, tryCollectionLock } from '../src/queue/collection-lock.js';
import type { CollectionJobData, SyncMode } from '../src/queue/queues.js';
import type { CollectionReport } from '../src/sync/sync-collection.js';
import { COLLECTIONS, isCollectionSlug } from '../src/vocabulary/collections.js';
import { isTenantSlug, tenantSlug } from '../src/vocabulary/ids.js';
import { parkedBy } from '../src/writes/gate-parking.js';

/** What one collection sync reports: the sync core's report, as the queue keeps it. */
export type CollectionOutcome = Readonly<Omit<CollectionReport, 'errorCode'>>;

/**
 * Runs one collection sync. `stop` asks it to finish the page in flight, commit it and stop; `signal` cancels
 * at once (the request in flight is dropped, nothing of it committed).
 */
export type RunCollection = (
  data: CollectionJobData,
  opts: { readonly signal: AbortSignal; readonly stop: AbortSignal },
) => Promise<CollectionOutcome>;

export interface CollectionProcessorDeps {
  readonly runCollection: RunCollection;
  /** Connection for the per tenant+collection lock. */
  readonly redis: Redis;
  readonly prefix: string;
  /** Lock TTL; renewed every third of it while the sync runs. */
  readonly lockTtlMs: number;
  /** Aborts when the process shuts down: the page in flight finishes, then the job goes back to the queue. */
  readonly stopping: AbortSignal;
  /**
   * True while a job of a collection this one reads references from (or takes embedded records from) is still
   * pending for the tenant: this job is then delayed, so it sees what that one mirrors. Default: never.
   */
  readonly prerequisitesPending?: (data: CollectionJobData, signal: AbortSignal) => Promise<boolean>;
  /** Aborts when shutdown has taken too long: the request in flight is dropped. Default: never. */
  readonly hardStop?: AbortSignal;
  readonly log: Logger;
}

export type CollectionJobResult = CollectionOutcome & { readonly tenant: string; readonly mode: SyncMode };

const PREREQUISITE_WAIT_MS = 2000;

/** Validates job data read back from Redis (anything may have been put there by another version). */
export function parseCollectionJobData(raw: unknown): CollectionJobData {
  const d = (raw ?? {}) as Record<string, unknown>;
  const { tenant, collection, mode } = d;
  if (!isTenantSlug(tenant)) {
    throw new UnrecoverableError('job data: tenant must be a tenant slug');
  }
  if (typeof collection !== 'string' || !isCollectionSlug(collection)) {
    throw new UnrecoverableError(`job data: collection must be one of ${COLLECTIONS.join(', ')}`);
  }
  if (mode !== 'full' && mode !== 'incremental')
    throw new UnrecoverableError('job data: mode must be full or incremental');
  return { tenant: tenantSlug(tenant), collection, mode };
}

/**
 * The collection-sync processor: takes the tenant+collection lock (a job finding it held is delayed, not
 * failed), runs the sync, maps the outcome. A refused key fails the job at once; other errors are retried
 * with backoff by BullMQ; a shutdown puts the job back so another worker resumes from its checkpoint.
 */
export const syncCollectionProcessor =
  (deps: CollectionProcessorDeps) =>
  async (job: Job, token?: string, signal?: AbortSignal): Promise<CollectionJobResult> => {
    const data = parseCollectionJobData(job.data);
    const log = deps.log.child({ jobId: job.id, tenant: data.tenant, collection: data.collection, mode: data.mode });
    if (await deps.prerequisitesPending?.(data, signal ?? new AbortController().signal)) {
      log.debug({ retryInMs: PREREQUISITE_WAIT_MS }, 'collections it references are still syncing; delayed');
      await job.moveToDelayed(Date.now() + PREREQUISITE_WAIT_MS, token);
      throw new DelayedError();
    }
    const attempt = await tryCollectionLock({
      redis: deps.redis,
      key: collectionLockKey(deps.prefix, data.tenant, data.collection),
      token: token ?? `job-${job.id}`,
      ttlMs: deps.lockTtlMs,
      log,
    });
    if (!attempt.held) {
      log.debug({ retryInMs: attempt.retryInMs }, 'collection busy in another job; delayed');
      await job.moveToDelayed(Date.now() + attempt.retryInMs, token);
      throw new DelayedError();
    }
    const cancel = [signal, deps.hardStop].filter((s): s is AbortSignal => s !== undefined);
    const run = cancel.length > 0 ? AbortSignal.any(cancel) : new AbortController().signal;
    try {
      const outcome = await deps.runCollection(data, { signal: run, stop: deps.stopping });
      // The sync core reports non-fatal failures on the collection; the queue retries them with backoff.
      if (outcome.error) throw new Error(outcome.error);
      // The sync core already logged the run's one outcome line; this is the job's view of it.
      log.debug(
        {
          status: outcome.skipped ? 'skipped' : 'ok',
          fetched: outcome.fetched,
          inserted: outcome.inserted,
          updated: outcome.updated,
          deleted: outcome.deleted,
          requests: outcome.requests,
          ms: outcome.ms,
        },
        'collection sync finished',
      );
      return { ...outcome, tenant: data.tenant, mode: data.mode };
    } catch (err) {
      if (err instanceof DelayedError) throw err;
      if (deps.stopping.aborted) return await requeue(job, token, log);
      // Parked while waiting for the key's budget: not a failure; the worker delays the job (see park-job.ts).
      if (parkedBy(err)) throw err;
      if (isUnderstudyError(err) && err.code === 'US_AUTH') {
        log.error({ code: err.code, reason: err.message }, 'key refused: job failed without retry');
        throw new UnrecoverableError(`key refused: ${err.message}`);
      }
      log.warn(
        {
          attempt: job.attemptsMade + 1,
          code: isUnderstudyError(err) ? err.code : undefined,
          reason: (err as Error).message,
        },
        'collection sync failed',
      );
      throw err;
    } finally {
      await attempt.lock.release();
    }
  };

/** Puts an interrupted job back at once, without spending an attempt: the next worker resumes from the checkpoint. */
async function requeue(job: Job, token: string | undefined, log: Logger): Promise<never> {
  log.info('shutting down: job handed back after the last committed page');
  await job.moveToDelayed(Date.now(), token);
  throw new DelayedError();
}
