import type { CallOptions, PartnersClient } from '../partners/partners-client.js';
import { COLLECTIONS, type CollectionSlug } from '../vocabulary/collections.js';
import type { TenantSlug } from '../vocabulary/ids.js';
import { compareIds } from './compare-ids.js';
import type { ReadRoutes } from './discover-routes.js';
import { existingAsDrafts } from './drafts-only.js';
import { keyFieldFor } from './position.js';
import { PUBLISHED, type Store, type SyncKey } from './store-port.js';
import { DEFAULT_PAGE_SIZE, type TenantTarget } from './sync-run.js';
import { type VariantSpec, variantsFor } from './variants.js';
import { wantedCollections } from './wanted-collections.js';

/** One collection and variant compared: counts, and (unless only counts were compared) ids and versions. */
export interface CheckCounts {
  readonly collection: CollectionSlug;
  readonly variant: string;
  readonly local: number;
  readonly upstream: number;
  /** upstream − local: positive when the mirror misses records, negative when it holds records gone upstream. */
  readonly drift: number;
  /** Records the upstream lists that the mirror has no live row for; null when only counts were compared. */
  readonly missing: number | null;
  /** Live rows of the mirror the upstream does not list; null when only counts were compared. */
  readonly extra: number | null;
  /** Records on both sides whose upstream `updatedAt` differs from the mirror's; null when only counts were compared. */
  readonly stale: number | null;
}

/** How many ids of each kind a check row names (the counts say how many there are in all). */
export const SAMPLE_IDS = 20;

/** A check row as the check returns it: the counts, and the first ids (in id order) of each kind found. */
export interface CheckRow extends CheckCounts {
  readonly missingIds?: readonly string[];
  readonly extraIds?: readonly string[];
  readonly staleIds?: readonly string[];
  /**
   * Of `extra`, the rows of records unpublished upstream (left the published reads, exist as drafts): the next full
   * pass tombstones them as `unpublished`. Published rows of versioned collections only; absent with counts only.
   */
  readonly unpublished?: number;
  readonly unpublishedIds?: readonly string[];
}

/** A collection (or one of its variants) the check could not compare, and why. */
export interface CheckSkip {
  readonly collection: CollectionSlug;
  readonly variant?: string;
  readonly reason: string;
}

/** Live rows of one key the mirror holds newer than the upstream's record: a full pass keeps them (newer wins). */
export interface AheadRows {
  readonly key: SyncKey;
  readonly ids: readonly string[];
  /** When the check began reading this key from the upstream (ISO): every record fetched later is newer news. */
  readonly since: string;
}

export interface TenantCheck {
  readonly slug: string;
  readonly collections: CheckRow[];
  readonly skipped: CheckSkip[];
  /** Requests the check sent (attempts, retries included). */
  readonly requests: number;
  /** What `--repair` must tombstone before its full pass, so that the pass writes the upstream's version. */
  readonly aheadOfUpstream: AheadRows[];
}

/** A stored check result, with when it was made. */
export interface StoredCheck extends CheckCounts {
  readonly tenant: string;
  readonly checkedAt: string;
}

/** A live row's key and `updated_at` (UTC with milliseconds; null when the record has no date). */
export interface RowVersion {
  readonly id: string;
  readonly updatedAt: string | null;
}

/**
 * Which live rows to read: dated ones with `updated_at` in [from, before) (a null bound is open), the undated ones,
 * or those of some ids.
 */
export type VersionRange =
  | { readonly from: string | null; readonly before: string | null }
  | { readonly undated: true }
  | { readonly ids: readonly string[] };

/** What the self-check needs of the mirror besides the `Store`: live rows, and where results are kept. */
export interface CheckStore {
  /** How many live (not tombstoned) rows a key has. */
  countLive(key: SyncKey): Promise<number>;
  /** The key and `updated_at` of the live rows of a key in `range`, in no particular order. */
  liveVersions(key: SyncKey, range: VersionRange): Promise<RowVersion[]>;
  /** Keeps `rows` as the tenant's latest results (one per collection and variant; others stay as they were). */
  saveChecks(tenant: string, rows: readonly CheckCounts[], at: string): Promise<void>;
  /** The latest result of every tenant, collection and variant checked so far. */
  lastChecks(): Promise<StoredCheck[]>;
}

export interface CheckDeps {
  readonly client: PartnersClient;
  readonly store: Pick<Store, 'leaseHolder'>;
  readonly checks: CheckStore;
  readonly signal: AbortSignal;
  readonly now?: () => Date;
  /** Compare counts only: one `limit=1` read per collection and variant, no ids (the check before ids). */
  readonly countsOnly?: boolean;
  /** Records asked for per page when comparing ids (the upstream may clamp it). Default 1000. */
  readonly pageSize?: number;
}

/** Why a collection was not compared while a sync of it runs: its rows are moving. */
/** Scheduled checks of one tenant run at most this often, whatever `checkCron` says (each costs reads). */
export const MIN_CHECK_INTERVAL_MS = 60_000;

/** Whether `tenant` was checked less than `MIN_CHECK_INTERVAL_MS` before `now` (a scheduled check then waits). */
export const checkedRecently = (checks: readonly StoredCheck[], tenant: string, now: number): boolean =>
  now - checks.filter((c) => c.tenant === tenant).reduce((m, c) => Math.max(m, Date.parse(c.checkedAt)), 0) <
  MIN_CHECK_INTERVAL_MS;

export const SYNC_RUNNING = 'a sync of it is running';

const sample = (ids: readonly string[]) => ids.slice(0, SAMPLE_IDS);

/** One collection and variant of a tenant to compare. */
interface VariantToCheck {
  readonly tenant: TenantSlug;
  readonly collection: CollectionSlug;
  readonly spec: VariantSpec;
}

/** The counts of one collection and variant (one `limit=1` read), and (unless `countsOnly`) its ids and versions. */
async function checkVariant(
  deps: CheckDeps,
  opts: CallOptions,
  now: () => string,
  { tenant, collection, spec }: VariantToCheck,
): Promise<{ readonly row: CheckRow; readonly ahead?: AheadRows }> {
  const key: SyncKey = { tenant, collection, variant: spec.variant };
  const since = now();
  const page = await deps.client.listPage({ ...spec.query, collection, limit: 1, depth: 0 }, opts);
  const local = await deps.checks.countLive(key);
  const counts = {
    collection,
    variant: spec.variant,
    local,
    upstream: page.totalDocs,
    drift: page.totalDocs - local,
  };
  if (deps.countsOnly) return { row: { ...counts, missing: null, extra: null, stale: null } };
  const limit = deps.pageSize ?? DEFAULT_PAGE_SIZE;
  const found = await compareIds({ client: deps.client, checks: deps.checks, opts, limit }, key, spec, page.totalDocs);
  // An extra row may be a record unpublished upstream: one look-up (draft=true) per 100 extra ids tells.
  const unpublished =
    spec.variant === PUBLISHED && found.extra.length > 0
      ? (await existingAsDrafts({ client: deps.client, opts }, collection, keyFieldFor(collection), found.extra)).sort()
      : [];
  const row: CheckRow = {
    ...counts,
    missing: found.missing.length,
    extra: found.extra.length,
    stale: found.stale.length,
    missingIds: sample(found.missing),
    extraIds: sample(found.extra),
    staleIds: sample(found.stale.map((r) => r.id)),
    unpublished: unpublished.length,
    unpublishedIds: sample(unpublished),
  };
  const ahead = found.stale.filter((r) => r.mirror !== null && r.upstream !== null && r.mirror > r.upstream);
  return ahead.length > 0 ? { row, ahead: { key, ids: ahead.map((r) => r.id), since } } : { row };
}

/**
 * Compares, for each collection of the tenant with a list route and each variant it mirrors, the mirror with the
 * upstream, through the tenant's rate gate, and keeps the results. First the counts: one `limit=1` read for the
 * upstream's `totalDocs` against the mirror's live rows. Then (unless `countsOnly`) the ids and versions: the
 * upstream's ids and `updatedAt` page by page against the mirror's live rows (`compareIds`), which finds what counts
 * cannot (a record missing and another extra cancel out). Costs `1 + ceil(n / page size)` requests per collection
 * and variant of n records. A collection a sync holds is skipped (its rows are moving), as is one without a list
 * route.
 */
export async function checkTenant(deps: CheckDeps, target: TenantTarget, routes: ReadRoutes): Promise<TenantCheck> {
  let requests = 0;
  const out: TenantCheck = { slug: target.slug, collections: [], skipped: [], requests: 0, aheadOfUpstream: [] };
  const opts: CallOptions = { signal: deps.signal, onAttempt: () => requests++ };
  const now = () => (deps.now?.() ?? new Date()).toISOString();
  const wanted = wantedCollections(target);
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
      const { row, ahead } = await checkVariant(deps, opts, now, { tenant: target.slug, collection, spec });
      out.collections.push(row);
      if (ahead) out.aheadOfUpstream.push(ahead);
    }
  }
  await deps.checks.saveChecks(target.slug, out.collections, now());
  return { ...out, requests };
}

/** Whether a check row finds the mirror apart from the upstream: by count, or by id and version. */
export const drifts = (c: Pick<CheckCounts, 'drift' | 'missing' | 'extra' | 'stale'>): boolean =>
  c.drift !== 0 || (c.missing ?? 0) > 0 || (c.extra ?? 0) > 0 || (c.stale ?? 0) > 0;

/** The collections of a check with drift in any variant, each once. */
export const driftingCollections = (check: TenantCheck): CollectionSlug[] => [
  ...new Set(check.collections.filter(drifts).map((c) => c.collection)),
];

/**
 * Tombstones the rows a check found newer than the upstream's record, dated when the check began reading their key:
 * the full pass `--repair` runs next fetches each record after that, so it revives the row with the upstream's
 * version (a tombstone gives way to a record fetched after it), which newer-wins would otherwise refuse. Returns how
 * many rows it tombstoned.
 */
export async function dropRowsAheadOfUpstream(store: Pick<Store, 'write'>, check: TenantCheck): Promise<number> {
  let dropped = 0;
  for (const a of check.aheadOfUpstream) {
    const r = await store.write(a.key, { deletes: a.ids, now: a.since, source: 'sync' });
    dropped += r.deleted;
  }
  return dropped;
}
