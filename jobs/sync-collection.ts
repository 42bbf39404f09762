import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from '../src/log.js';
import { collectionLockKey, tryCollectionLock } from '../src/queue/collection-lock.js';
import type { CollectionJobData } from '../src/queue/queues.js';
import { type CollectionJobResult, type RunCollection, runCollectionJob } from '../src/sync/run-collection-job.js';
import type { ScheduleClock } from '../src/sync/schedule-clock.js';

export type { CollectionJobResult, CollectionOutcome, RunCollection } from '../src/sync/run-collection-job.js';

export interface CollectionProcessorDeps {
  readonly runCollection: RunCollection;
  /** Connection for the per tenant+collection lock. */
  readonly redis: Redis;
  readonly prefix: string;
  /** Lock TTL; renewed every third of it while the sync runs. */
  readonly lockTtlMs: number;
  /** Where the lock's renewals tick. */
  readonly clock: Pick<ScheduleClock, 'every'>;
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

/**
 * The collection-sync processor: `runCollectionJob` decides (lock, prerequisites, outcome), this maps the
 * decision to BullMQ. A delay moves the job to delayed without spending an attempt; a refused key fails it at
 * once; other errors are rethrown for BullMQ's backoff (a parked one for the worker to park, see park-job.ts).
 */
export const syncCollectionProcessor =
  (deps: CollectionProcessorDeps) =>
  async (job: Job, token?: string, signal?: AbortSignal): Promise<CollectionJobResult> => {
    const decision = await runCollectionJob(
      {
        ...deps,
        takeLock: (data, log) =>
          tryCollectionLock({
            redis: deps.redis,
            key: collectionLockKey(deps.prefix, data.tenant, data.collection),
            token: token ?? `job-${job.id}`,
            ttlMs: deps.lockTtlMs,
            clock: deps.clock,
            log,
          }),
      },
      { id: job.id, data: job.data, attemptsMade: job.attemptsMade },
      signal,
    );
    switch (decision.kind) {
      case 'complete':
        return decision.result;
      case 'delay':
        await job.moveToDelayed(Date.now() + decision.delayMs, token);
        throw new DelayedError();
      case 'fail':
        throw new UnrecoverableError(decision.message);
      case 'retry':
      case 'park':
        throw decision.error;
    }
  };
