import type { CallOptions, PartnersClient } from '../partners/partners-client.js';
import { COLLECTIONS, type CollectionSlug } from '../vocabulary/collections.js';
import type { ReadRoutes } from './discover-routes.js';
import type { Store, SyncKey } from './store-port.js';
import type { TenantTarget } from './sync-run.js';
import { variantsFor } from './variants.js';

/** One collection and variant compared: the mirror's live rows against the upstream's `totalDocs`. */
export interface CheckRow {
  readonly collection: CollectionSlug;
  readonly variant: string;
  readonly local: number;
  readonly upstream: number;
  /** upstream − local: positive when the mirror misses records, negative when it holds records gone upstream. */
  readonly drift: number;
}

/** A collection (or one of its variants) the check could not compare, and why. */
export interface CheckSkip {
  readonly collection: CollectionSlug;
  readonly variant?: string;
  readonly reason: string;
}

export interface TenantCheck {
  readonly slug: string;
  readonly collections: CheckRow[];
  readonly skipped: CheckSkip[];
}

/** A stored check result, with when it was made. */
export interface StoredCheck extends CheckRow {
  readonly tenant: string;
  readonly checkedAt: string;
}

/** What the self-check needs of the mirror besides the `Store`: live counts, and where results are kept. */
export interface CheckStore {
  /** How many live (not tombstoned) rows a key has. */
  countLive(key: SyncKey): Promise<number>;
  /** Keeps `rows` as the tenant's latest results (one per collection and variant; others stay as they were). */
  saveChecks(tenant: string, rows: readonly CheckRow[], at: string): Promise<void>;
  /** The latest result of every tenant, collection and variant checked so far. */
  lastChecks(): Promise<StoredCheck[]>;
}

export interface CheckDeps {
  readonly client: PartnersClient;
  readonly store: Pick<Store, 'leaseHolder'>;
  readonly checks: CheckStore;
  readonly signal: AbortSignal;
  readonly now?: () => Date;
}

/** Why a collection was not compared while a sync of it runs: its rows are moving. */
export const SYNC_RUNNING = 'a sync of it is running';

/**
 * Compares, for each collection of the tenant with a list route and each variant it mirrors, the live rows of the
 * mirror with the upstream's `totalDocs` (one `limit=1` read each, through the tenant's rate gate), and keeps the
 * results. A collection a sync holds is skipped (its counts are moving), as is one without a list route.
 */
export async function checkTenant(deps: CheckDeps, target: TenantTarget, routes: ReadRoutes): Promise<TenantCheck> {
  const out: TenantCheck = { slug: target.slug, collections: [], skipped: [] };
  const opts: CallOptions = { signal: deps.signal };
  const wanted = target.collections && target.collections.length > 0 ? target.collections : COLLECTIONS;
  for (const collection of COLLECTIONS.filter((c) => wanted.includes(c))) {
    if (!routes.list.has(collection)) {
      out.skipped.push({ collection, reason: 'no list route to count it by' });
      continue;
    }
    if (await deps.store.leaseHolder(target.slug, collection)) {
      out.skipped.push({ collection, reason: SYNC_RUNNING });
      continue;
    }
    for (const spec of variantsFor(target, collection)) {
      const page = await deps.client.listPage({ ...spec.query, collection, limit: 1, depth: 0 }, opts);
      const local = await deps.checks.countLive({ tenant: target.slug, collection, variant: spec.variant });
      out.collections.push({
        collection,
        variant: spec.variant,
        local,
        upstream: page.totalDocs,
        drift: page.totalDocs - local,
      });
    }
  }
  await deps.checks.saveChecks(target.slug, out.collections, (deps.now?.() ?? new Date()).toISOString());
  return out;
}

/** The collections of a check with drift in any variant, each once. */
export const driftingCollections = (check: TenantCheck): CollectionSlug[] => [
  ...new Set(check.collections.filter((c) => c.drift !== 0).map((c) => c.collection)),
];
