import { type Job, UnrecoverableError } from 'bullmq';
import { isUnderstudyError } from '../src/errors.js';
import type { Logger } from '../src/log.js';
import {
  addCollectionJob,
  type RetryPolicy,
  type SyncQueue,
  type TenantJobData,
  type TenantJobResult,
} from '../src/queue/queues.js';
import { type CollectionSlug, isCollectionSlug } from '../src/vocabulary/collections.js';
import { isTenantSlug, tenantSlug } from '../src/vocabulary/ids.js';

export interface TenantProcessorDeps {
  readonly queue: SyncQueue;
  /** The collections a tenant syncs, in order; null when the tenant is not in the config (any more). */
  readonly collectionsOf: (
    tenant: string,
    signal: AbortSignal,
  ) => readonly CollectionSlug[] | null | Promise<readonly CollectionSlug[] | null>;
  readonly retry?: RetryPolicy;
  readonly log: Logger;
}

export function parseTenantJobData(raw: unknown): TenantJobData {
  const d = (raw ?? {}) as Record<string, unknown>;
  const { tenant, mode, collections } = d;
  if (!isTenantSlug(tenant)) {
    throw new UnrecoverableError('job data: tenant must be a tenant slug');
  }
  if (mode !== 'full' && mode !== 'incremental')
    throw new UnrecoverableError('job data: mode must be full or incremental');
  if (collections === undefined) return { tenant: tenantSlug(tenant), mode };
  if (!Array.isArray(collections) || !collections.every((c) => typeof c === 'string' && isCollectionSlug(c))) {
    throw new UnrecoverableError('job data: collections must be collection names');
  }
  return { tenant: tenantSlug(tenant), mode, collections: collections as CollectionSlug[] };
}

/** The tenant processor: fans out one collection job per collection (joining any equal one already waiting). */
export const syncTenantProcessor =
  (deps: TenantProcessorDeps) =>
  async (job: Job, _token?: string, signal?: AbortSignal): Promise<TenantJobResult> => {
    const data = parseTenantJobData(job.data);
    let configured: readonly CollectionSlug[] | null;
    try {
      configured = await deps.collectionsOf(data.tenant, signal ?? new AbortController().signal);
    } catch (err) {
      // Route discovery may already meet a refused key: that fails the job at once, like a collection job.
      if (isUnderstudyError(err) && err.code === 'US_AUTH') throw new UnrecoverableError(`key refused: ${err.message}`);
      throw err;
    }
    if (!configured) throw new UnrecoverableError(`tenant "${data.tenant}" is not in the config`);
    const collections = data.collections ?? configured;
    const jobs: { collection: CollectionSlug; jobId: string }[] = [];
    for (const collection of collections) {
      const jobId = await addCollectionJob(
        deps.queue,
        { tenant: data.tenant, collection, mode: data.mode },
        deps.retry,
      );
      jobs.push({ collection, jobId });
    }
    deps.log.info(
      { jobId: job.id, tenant: data.tenant, mode: data.mode, collections: jobs.length },
      'tenant sync fanned out',
    );
    return { jobs };
  };
