import { hasCode } from '../errors.js';
import type { Logger } from '../log.js';
import { type CollectionSlug, isCollectionSlug } from '../vocabulary/collections.js';
import { isTenantSlug, type TenantSlug, tenantSlug } from '../vocabulary/ids.js';
import type { CollectionTarget } from './run-collection-job.js';
import type { SyncMode } from './sync-collection.js';

/** A tenant sync as a queued job asks for it: all its configured collections, or the ones named. */
export interface TenantTarget {
  readonly tenant: TenantSlug;
  readonly mode: SyncMode;
  readonly collections?: readonly CollectionSlug[];
}

export interface TenantJobDeps {
  /** The collections a tenant syncs, in order; null when the tenant is not in the config (any more). */
  readonly collectionsOf: (
    tenant: string,
    signal: AbortSignal,
  ) => readonly CollectionSlug[] | null | Promise<readonly CollectionSlug[] | null>;
  /** Queues one collection sync (or joins an equal one already waiting); returns its job id. */
  readonly addCollection: (target: CollectionTarget) => Promise<string>;
  readonly log: Logger;
}

/** The collection jobs a tenant job added or joined. */
export interface FanOut {
  readonly jobs: readonly { readonly collection: CollectionSlug; readonly jobId: string }[];
}

/** What the queue does with a tenant job (an error thrown by the queue itself is left to the queue's retries). */
export type TenantJobDecision =
  | { readonly kind: 'complete'; readonly result: FanOut }
  /** Failed for good: a refused key, a tenant no longer configured, unreadable job data. */
  | { readonly kind: 'fail'; readonly message: string };

/** Validates job data read back from Redis (anything may have been put there by another version). */
export function readTenantTarget(raw: unknown): TenantTarget | { readonly error: string } {
  const { tenant, mode, collections } = (raw ?? {}) as Record<string, unknown>;
  if (!isTenantSlug(tenant)) return { error: 'job data: tenant must be a tenant slug' };
  if (mode !== 'full' && mode !== 'incremental') return { error: 'job data: mode must be full or incremental' };
  if (collections === undefined) return { tenant: tenantSlug(tenant), mode };
  if (!Array.isArray(collections) || !collections.every((c) => typeof c === 'string' && isCollectionSlug(c))) {
    return { error: 'job data: collections must be collection names' };
  }
  return { tenant: tenantSlug(tenant), mode, collections: collections as CollectionSlug[] };
}

/** Runs one tenant job: fans out one collection job per collection, in the tenant's order. */
export async function runTenantJob(
  deps: TenantJobDeps,
  job: { readonly id: string | undefined; readonly data: unknown },
  signal?: AbortSignal,
): Promise<TenantJobDecision> {
  const data = readTenantTarget(job.data);
  if ('error' in data) return { kind: 'fail', message: data.error };
  let configured: readonly CollectionSlug[] | null;
  try {
    configured = await deps.collectionsOf(data.tenant, signal ?? new AbortController().signal);
  } catch (err) {
    // Route discovery may already meet a refused key: that fails the job at once, like a collection job.
    if (hasCode(err, 'US_AUTH')) return { kind: 'fail', message: `key refused: ${err.message}` };
    throw err;
  }
  if (!configured) return { kind: 'fail', message: `tenant "${data.tenant}" is not in the config` };
  const jobs: { collection: CollectionSlug; jobId: string }[] = [];
  for (const collection of data.collections ?? configured) {
    jobs.push({ collection, jobId: await deps.addCollection({ tenant: data.tenant, collection, mode: data.mode }) });
  }
  deps.log.info(
    { jobId: job.id, tenant: data.tenant, mode: data.mode, collections: jobs.length },
    'tenant sync fanned out',
  );
  return { kind: 'complete', result: { jobs } };
}
