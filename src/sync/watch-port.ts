import type { CollectionSlug } from '../vocabulary/collections.js';
import type { TenantSlug } from '../vocabulary/ids.js';
import type { CheckStore } from './self-check.js';

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
