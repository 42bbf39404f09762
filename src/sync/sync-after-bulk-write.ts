import { UnderstudyError } from '../errors.js';
import type { Logger } from '../log.js';
import type { PartnersClient } from '../partners/partners-client.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import type { TenantSlug } from '../vocabulary/ids.js';
import type { ReadRoutes } from './discover-routes.js';
import type { CollectionLockAttempt } from './run-collection-job.js';
import type { Store } from './store-port.js';
import { syncCollection, type TenantTarget } from './sync-collection.js';

/** What brings a collection up to date after a bulk write. */
export interface SyncAfterBulkDeps {
  /**
   * `inline` syncs the collection incrementally in the write job under the collection's lock (a queued sync job
   * instead while another job holds it); `queue` always queues a sync job.
   */
  readonly mode: 'inline' | 'queue';
  readonly store: Store;
  readonly log: Logger;
  /** The tenant's read routes (discovered once and reused by the caller). */
  readonly routesOf: (tenant: string, signal: AbortSignal) => Promise<ReadRoutes>;
  /** Takes the tenant+collection lock the sync jobs take (renewed while held). */
  readonly takeLock: (tenant: TenantSlug, collection: CollectionSlug) => Promise<CollectionLockAttempt>;
  /** Queues an incremental sync job of the collection; resolves with its job id. */
  readonly queueSync: (tenant: TenantSlug, collection: CollectionSlug) => Promise<string>;
}

/**
 * After a bulk write: the collection's mirror is brought up to date by an incremental sync, run here while no
 * sync job holds the collection, else left to a queued sync job. A sync that fails is thrown (`US_UPSTREAM`), so
 * the write reports its mirror as not synced; the lock is released either way.
 */
export async function syncAfterBulkWrite(
  deps: SyncAfterBulkDeps,
  tenant: { readonly client: PartnersClient; readonly target: TenantTarget },
  collection: CollectionSlug,
  signal: AbortSignal,
): Promise<void> {
  const { log } = deps;
  const slug = tenant.target.slug;
  const queue = async () => {
    const syncJobId = await deps.queueSync(slug, collection);
    log.info({ tenant: slug, collection, syncJobId }, 'bulk write: incremental sync queued');
  };
  if (deps.mode === 'queue') return queue();
  const lock = await deps.takeLock(slug, collection);
  if (!lock.held) return queue();
  try {
    const routes = await deps.routesOf(slug, signal);
    const syncDeps = { client: tenant.client, store: deps.store, log };
    const report = await syncCollection(syncDeps, tenant.target, collection, 'incremental', routes, signal);
    if (report.error) throw new UnderstudyError('US_UPSTREAM', `incremental sync of ${collection}: ${report.error}`);
    if (report.skipped) log.warn({ collection, reason: report.skipped }, 'bulk write: collection cannot be synced');
  } finally {
    await lock.lock.release();
  }
}
