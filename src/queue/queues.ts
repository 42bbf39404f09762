import { type ConnectionOptions, type JobsOptions, Queue } from 'bullmq';
import type { CollectionSlug } from '../vocabulary/collections.js';
import type { TenantSlug } from '../vocabulary/ids.js';
import type { ErrorListener } from './error-listeners.js';

/** The one queue syncs run on. */
export const SYNC_QUEUE = 'sync';
export const DEFAULT_PREFIX = 'understudy';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

import type { SyncMode } from '../sync/sync-collection.js';

export type { SyncMode };

/** A tenant job: fans out one collection job per collection (all the tenant's collections when absent). */
export interface TenantJobData {
  readonly tenant: TenantSlug;
  readonly mode: SyncMode;
  readonly collections?: readonly CollectionSlug[];
}

/** A collection job: one sync of one collection. Job data never holds an API key. */
export interface CollectionJobData {
  readonly tenant: TenantSlug;
  readonly collection: CollectionSlug;
  readonly mode: SyncMode;
}

export type SyncJobName = 'sync-tenant' | 'sync-collection';
export type SyncJobData = TenantJobData | CollectionJobData;

/** Result of a tenant job: the ids of the collection jobs it added (or the waiting ones it joined). */
export interface TenantJobResult {
  readonly jobs: readonly { readonly collection: CollectionSlug; readonly jobId: string }[];
}

// Names are typed as string: BullMQ types job-scheduler ids with the job-name type parameter.
export type SyncQueue = Queue<SyncJobData, unknown, string>;

export interface RetryPolicy {
  /** Attempts per job, the first included (default 5). */
  readonly attempts: number;
  /** First backoff delay; doubles each attempt (default 2000 ms). */
  readonly backoffMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 5, backoffMs: 2000 };

/** Job options every sync job gets: exponential backoff, and a bounded history for `status`. */
export const jobOptions = (retry: RetryPolicy = DEFAULT_RETRY): JobsOptions => ({
  attempts: retry.attempts,
  backoff: { type: 'exponential', delay: retry.backoffMs },
  removeOnComplete: { count: 200, age: 7 * 24 * 3600 },
  removeOnFail: { count: 500, age: 14 * 24 * 3600 },
});

/**
 * Opens the sync queue, `onError` listening to its `error` events (src/queue/error-listeners.ts). The connection
 * options are BullMQ's (an ioredis instance or its options).
 */
export const openSyncQueue = (connection: ConnectionOptions, prefix: string, onError: ErrorListener): SyncQueue =>
  new Queue<SyncJobData, unknown, string>(SYNC_QUEUE, { connection, prefix }).on('error', onError);

/** The deduplication id of a collection sync: one waiting (plus one behind a running one) per mode. */
export const dedupIdFor = (tenant: string, collection: string, mode: SyncMode): string =>
  `sync.${tenant}.${collection}.${mode}`;

export const isCollectionJob = (data: SyncJobData): data is CollectionJobData =>
  typeof (data as { collection?: unknown }).collection === 'string';

const isWaiting = async (queue: SyncQueue, jobId: string | null): Promise<boolean> => {
  if (!jobId) return false;
  const job = await queue.getJob(jobId);
  if (!job) return false;
  const state = await job.getState();
  return state === 'waiting' || state === 'delayed' || state === 'prioritized';
};

/** Whether a sync of this tenant and collection (either mode) waits, is delayed or runs now. */
export async function collectionSyncPending(queue: SyncQueue, tenant: string, collection: string): Promise<boolean> {
  for (const mode of ['full', 'incremental'] as const) {
    const id = await queue.getDeduplicationJobId(dedupIdFor(tenant, collection, mode));
    if (!id) continue;
    const state = await (await queue.getJob(id))?.getState();
    if (state === 'waiting' || state === 'delayed' || state === 'prioritized' || state === 'active') return true;
  }
  return false;
}

/**
 * Adds one collection sync unless an equal one already waits (then returns that job's id). A full sync removes a
 * waiting incremental of the same collection (it covers it); an incremental is dropped while a full waits.
 */
export async function addCollectionJob(
  queue: SyncQueue,
  data: CollectionJobData,
  retry: RetryPolicy = DEFAULT_RETRY,
): Promise<string> {
  const { tenant, collection, mode } = data;
  if (mode === 'incremental') {
    const fullId = await queue.getDeduplicationJobId(dedupIdFor(tenant, collection, 'full'));
    if (fullId && (await isWaiting(queue, fullId))) return fullId;
  } else {
    const incId = await queue.getDeduplicationJobId(dedupIdFor(tenant, collection, 'incremental'));
    if (incId && (await isWaiting(queue, incId))) {
      // remove() refuses a job that a worker has just locked; that one then simply runs before the full.
      const job = await queue.getJob(incId);
      await job?.remove().catch(() => {});
    }
  }
  const job = await queue.add(
    'sync-collection',
    { tenant, collection, mode },
    {
      ...jobOptions(retry),
      deduplication: { id: dedupIdFor(tenant, collection, mode), keepLastIfActive: true },
    },
  );
  if (!job.id) throw new Error('BullMQ returned a job without an id');
  return job.id;
}

/** Adds a tenant job (fan-out); returns its id. */
export async function addTenantJob(
  queue: SyncQueue,
  data: TenantJobData,
  retry: RetryPolicy = DEFAULT_RETRY,
): Promise<string> {
  const job = await queue.add('sync-tenant', data, jobOptions(retry));
  if (!job.id) throw new Error('BullMQ returned a job without an id');
  return job.id;
}
