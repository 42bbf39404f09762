import type { Redis } from 'ioredis';
import { UnderstudyError } from '../errors.js';
import { type CollectionSlug, isCollectionSlug } from '../vocabulary/collections.js';
import { isTenantSlug, tenantSlug } from '../vocabulary/ids.js';
import { addCollectionJob, addTenantJob, openSyncQueue, type SyncMode } from './queues.js';
import { asUnderstudyError } from './redis-settings.js';

const invalid = (message: string) => new UnderstudyError('US_VALIDATION', message);

/** Throws `US_VALIDATION` for a request no worker could run (checked before anything connects). */
export function checkSyncJobRequest(req: SyncJobRequest): void {
  if (!isTenantSlug(req.tenant)) throw invalid(`tenant: not a tenant slug: ${req.tenant}`);
  if (req.mode !== 'full' && req.mode !== 'incremental') throw invalid('mode: must be full or incremental');
  for (const c of req.collections ?? []) if (!isCollectionSlug(c)) throw invalid(`collections: not a collection: ${c}`);
}

export interface SyncJobRequest {
  readonly tenant: string;
  /** One collection: a collection job; none: every collection of the tenant; several: a tenant job limited to them. */
  readonly collections?: readonly CollectionSlug[];
  readonly mode: SyncMode;
}

/**
 * Adds a sync job for the workers on the sync queue of `redis` under `prefix` (a connection the caller owns);
 * resolves to its job id (the id of the equal job already waiting, when there is one).
 */
export async function addSyncJob(redis: Redis, prefix: string, req: SyncJobRequest): Promise<string> {
  if (!isTenantSlug(req.tenant)) throw invalid(`tenant: not a tenant slug: ${req.tenant}`);
  if (req.mode !== 'full' && req.mode !== 'incremental') throw invalid('mode: must be full or incremental');
  for (const c of req.collections ?? []) if (!isCollectionSlug(c)) throw invalid(`collections: not a collection: ${c}`);
  const queue = openSyncQueue(redis, prefix);
  queue.on('error', () => {});
  try {
    const tenant = tenantSlug(req.tenant);
    const collections = [...new Set(req.collections ?? [])];
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
