import { type Job, UnrecoverableError } from 'bullmq';
import type { Logger } from '../src/log.js';
import { addCollectionJob, type RetryPolicy, type SyncQueue, type TenantJobResult } from '../src/queue/queues.js';
import { runTenantJob, type TenantJobDeps } from '../src/sync/run-tenant-job.js';

export interface TenantProcessorDeps {
  readonly queue: SyncQueue;
  /** The collections a tenant syncs, in order; null when the tenant is not in the config (any more). */
  readonly collectionsOf: TenantJobDeps['collectionsOf'];
  readonly retry?: RetryPolicy;
  readonly log: Logger;
}

/**
 * The tenant processor: `runTenantJob` fans out one collection job per collection (joining any equal one already
 * waiting); this maps a final failure to BullMQ's `UnrecoverableError`.
 */
export const syncTenantProcessor =
  (deps: TenantProcessorDeps) =>
  async (job: Job, _token?: string, signal?: AbortSignal): Promise<TenantJobResult> => {
    const decision = await runTenantJob(
      {
        collectionsOf: deps.collectionsOf,
        addCollection: (target) => addCollectionJob(deps.queue, target, deps.retry),
        log: deps.log,
      },
      { id: job.id, data: job.data },
      signal,
    );
    if (decision.kind === 'fail') throw new UnrecoverableError(decision.message);
    return decision.result;
  };
