import { type CollectionSlug, isCollectionSlug } from '../vocabulary/collections.js';
import { isTenantSlug, tenantSlug } from '../vocabulary/ids.js';
import { addCollectionJob, addTenantJob, DEFAULT_PREFIX, openSyncQueue, type SyncMode } from './queues.js';
import { shortLivedRedis } from './redis-settings.js';

export interface EnqueueSyncOptions {
  /** e.g. redis://127.0.0.1:6379 */
  readonly redisUrl: string;
  /** Key prefix the workers use (default `understudy`). */
  readonly prefix?: string;
  readonly tenant: string;
  /** One collection: a collection job; none: every collection of the tenant; several: a tenant job limited to them. */
  readonly collections?: readonly CollectionSlug[];
  readonly mode: SyncMode;
}

/**
 * Adds a sync job for the workers instead of syncing in this process; resolves to its job id (the id of the
 * equal job already waiting, when there is one). Throws `UnderstudyError` `US_REDIS` when Redis is unreachable.
 */
export async function enqueueSync(opts: EnqueueSyncOptions): Promise<string> {
  if (!isTenantSlug(opts.tenant)) throw new TypeError(`tenant: not a tenant slug: ${opts.tenant}`);
  if (opts.mode !== 'full' && opts.mode !== 'incremental') throw new TypeError('mode: must be full or incremental');
  for (const c of opts.collections ?? [])
    if (!isCollectionSlug(c)) throw new TypeError(`collections: not a collection: ${c}`);
  const redis = await shortLivedRedis(opts.redisUrl, 2000, { enableOfflineQueue: true, maxRetriesPerRequest: 2 });
  const queue = openSyncQueue(redis, opts.prefix ?? DEFAULT_PREFIX);
  queue.on('error', () => {});
  try {
    const tenant = tenantSlug(opts.tenant);
    const collections = [...new Set(opts.collections ?? [])];
    const [only] = collections;
    if (collections.length === 1 && only)
      return await addCollectionJob(queue, { tenant, collection: only, mode: opts.mode });
    return await addTenantJob(
      queue,
      collections.length > 0 ? { tenant, mode: opts.mode, collections } : { tenant, mode: opts.mode },
    );
  } finally {
    await queue.close().catch(() => {});
    await redis.quit().catch(() => redis.disconnect());
  }
}
