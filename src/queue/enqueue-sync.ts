import type { Redis } from 'ioredis';
import { UnderstudyError } from '../errors.js';
import { type CollectionName, type CollectionSlug, collectionNamed } from '../vocabulary/collections.js';
import { isTenantSlug, tenantSlug } from '../vocabulary/ids.js';
import { errorsFailTheCalls } from './error-listeners.js';
import { addCollectionJob, addTenantJob, openSyncQueue, type SyncMode } from './queues.js';
import { asUnderstudyError } from './redis-settings.js';

const invalid = (message: string) => new UnderstudyError('US_VALIDATION', message);

/**
 * The request with its collections as API paths (`event_instances`, the table's name, is taken too); throws
 * `US_VALIDATION` for a request no worker could run (checked before anything connects).
 */
export function checkSyncJobRequest(req: SyncJobRequest): SyncJobRequest & { collections: CollectionSlug[] } {
  if (!isTenantSlug(req.tenant)) throw invalid(`tenant: not a tenant slug: ${req.tenant}`);
  if (req.mode !== 'full' && req.mode !== 'incremental') throw invalid('mode: must be full or incremental');
  const collections = (req.collections ?? []).map((c) => {
    const slug = typeof c === 'string' ? collectionNamed(c) : undefined;
    if (slug === undefined) throw invalid(`collections: not a collection: ${c}`);
    return slug;
  });
  return { ...req, collections };
}

export interface SyncJobRequest {
  readonly tenant: string;
  /**
   * One collection: a collection job; none: every collection of the tenant; several: a tenant job limited to them.
   * Each by its API path (`event-instances`) or its table's name (`event_instances`).
   */
  readonly collections?: readonly CollectionName[];
  readonly mode: SyncMode;
}

/**
 * Adds a sync job for the workers on the sync queue of `redis` under `prefix` (a connection the caller owns);
 * resolves to its job id (the id of the equal job already waiting, when there is one).
 */
export async function addSyncJob(redis: Redis, prefix: string, request: SyncJobRequest): Promise<string> {
  const req = checkSyncJobRequest(request);
  const queue = openSyncQueue(redis, prefix, errorsFailTheCalls);
  try {
    const tenant = tenantSlug(req.tenant);
    const collections = [...new Set(req.collections)];
    const [only] = collections;
    if (collections.length === 1 && only)
      return await addCollectionJob(queue, { tenant, collection: only, mode: req.mode });
    return await addTenantJob(
      queue,
      collections.length > 0 ? { tenant, mode: req.mode, collections } : { tenant, mode: req.mode },
    );
  } catch (err) {
    throw asUnderstudyError(err);
  } finally {
    await queue.close().catch(() => {});
  }
}
