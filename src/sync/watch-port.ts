import type { Logger } from '../log.js';
import type { PartnersClient } from '../partners/partners-client.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import type { TenantSlug } from '../vocabulary/ids.js';
import type { ReadRoutes } from './discover-routes.js';
import type { ScheduleClock } from './schedule-clock.js';
import type { CheckStore } from './self-check.js';
import type { CollectionReport, SyncDeps } from './sync-collection.js';
import type { TickOutcome } from './watch-collection.js';
import type { WatchedTenant } from './watched-collection.js';

/** How often a watcher writes what `status` shows of its collections (`watch_state`), and reports each key's share. */
export const WATCH_STATUS_EVERY_MS = 5_000;

/** What `status` shows of the watch of one tenant and collection (`watch_state`). */
export interface WatchStatusRow {
  readonly tenant: TenantSlug;
  readonly collection: CollectionSlug;
  /** The watching process. */
  readonly holder: string;
  /** When it was last probed (ISO), or null before its first probe. */
  readonly lastProbeAt: string | null;
  /** When the last probe that found a change upstream was made (ISO), or null. */
  readonly lastChangeAt: string | null;
  /**
   * When the last probe that succeeded (quiet, or its pass and search through) was made (ISO), or null: the mirror was
   * then as fresh as the upstream.
   */
  readonly lastFreshAt: string | null;
  /** The current probe interval, in milliseconds. */
  readonly intervalMs: number;
  /** Probes made by this holder. */
  readonly probes: number;
}

/**
 * What watch needs of the mirror besides the `Store`: the live rows it compares the upstream's counts with, which
 * worker watches which tenant (a lease per tenant, so two workers never probe one tenant), and where it keeps what
 * `status` shows.
 */
export interface WatchStore extends Pick<CheckStore, 'countLive' | 'liveVersions'> {
  /**
   * Takes or renews, for `holder`, the watch of each of `tenants` that is free, expired or already `holder`'s, for
   * `ttlMs` from now; returns the tenants `holder` watches now.
   */
  claimWatch(tenants: readonly TenantSlug[], holder: string, ttlMs: number): Promise<Set<TenantSlug>>;
  /** Gives up every watch `holder` has (a clean stop hands its tenants over at once). */
  releaseWatch(holder: string): Promise<void>;
  /** Keeps `rows` as the current watch of their tenants and collections. */
  saveWatchStatus(rows: readonly WatchStatusRow[], at: string): Promise<void>;
}

/** What a watch runs over (`watchTenants`). */
export interface WatchDeps {
  /** The tenants to watch; asked again at each ownership round (a reload changes them). */
  readonly tenants: () => readonly WatchedTenant[];
  /** The sync deps of a tenant's runs, given its (metered) client. */
  readonly syncDeps: (client: PartnersClient) => SyncDeps;
  readonly rows: WatchStore;
  readonly routesOf: (slug: string, signal: AbortSignal) => Promise<ReadRoutes>;
  readonly log: Logger;
  /** Where the watch's time and timers come from (default: the wall clock). */
  readonly clock?: ScheduleClock;
  /** The jitter of the first probes: a number in [0, 1) (default: Math's). */
  readonly random?: () => number;
  /** Told after each turn of a collection, with the report of the run it started, if any. */
  readonly onProbe?: (e: {
    tenant: string;
    collection: CollectionSlug;
    outcome: TickOutcome;
    report?: CollectionReport;
  }) => void;
  /**
   * Registers a listener called after each reload of the config: the watched tenants then follow the new settings
   * (`tenants()`) at once, their next turns applying every knob.
   */
  readonly onReload?: (listener: () => void) => void;
  /** Told every few seconds of the share of each key's read budget watch used over its last window. */
  readonly onShare?: (e: { key: string; share: number }) => void;
  /** Turns under way at once, across tenants (default 16). */
  readonly concurrency?: number;
  /** How long a worker's watch of a tenant lasts unless renewed; renewed every quarter of it (default 20 s). */
  readonly ownerTtlMs?: number;
  /** Who watches, in `watch_owners` and `watch_state`; default host:pid:random. */
  readonly holder?: string;
}
