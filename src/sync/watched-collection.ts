import type { PartnersClient } from '../partners/partners-client.js';
import type { RateBudget } from '../partners/rate-gate.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import type { TenantSlug } from '../vocabulary/ids.js';
import type { WatchKnobs } from '../vocabulary/watch-knobs.js';
import type { Timer } from './schedule-clock.js';
import type { TenantTarget } from './sync-collection.js';
import { wantedCollections } from './wanted-collections.js';
import type { TickOutcome } from './watch-collection.js';
import type { MeterLimits, WatchMeter } from './watch-meter.js';
import { type Pace, paceAfter, STILL, type TurnFound } from './watch-pace.js';
import type { WatchStatusRow } from './watch-port.js';

/** A tenant to keep live, with its client, knobs and key. */
export interface WatchedTenant {
  readonly target: TenantTarget;
  readonly client: PartnersClient;
  readonly knobs: WatchKnobs;
  readonly budget: RateBudget;
  /** Names the key (its hash, as metrics and Redis name it, never the key): the tenants on one key share one meter. */
  readonly keyId: string;
}

/** One watched collection of one tenant: its state between turns. */
export interface Watched {
  /** Its tenant's settings as of the last reload. */
  tenant: WatchedTenant;
  readonly collection: CollectionSlug;
  readonly meter: WatchMeter;
  pace: Pace;
  intervalMs: number;
  timer: Timer | undefined;
  busy: boolean;
  /** Its tenant is no longer watched here (lost, refused, reloaded): no further turn. */
  dropped: boolean;
  /** Its last turn failed (logged once per spell of failures). */
  failing: boolean;
  /** Its last turn found a change. */
  lastChanged: boolean;
  /** When it was last probed (its count compared), not passed alone (ms). */
  countedAt: number;
  /** Where the rotation over the records the probe does not list goes on. */
  rotation: string | null;
  /** What a quiet turn of it reads: the probe, and a range of the rotation while the probe cannot list it all. */
  quietReads: number;
  lastProbeAt: string | null;
  lastChangeAt: string | null;
  /** When the last probe that succeeded was made: the mirror was then as fresh as the upstream. */
  lastFreshAt: string | null;
  probes: number;
  dirty: boolean;
  unexplained: string | null;
}

/** What a tenant's turns hold its key's watch meter to: its budget and `maxShare`. */
export const limitsOf = (t: WatchedTenant): MeterLimits => ({
  readsPerWindow: t.budget.reads,
  windowMs: t.budget.windowMs,
  maxShare: t.knobs.maxShare,
});

/** Whether a tenant's new settings watch what its old ones did: the same key and collections. */
export const sameWatch = (a: WatchedTenant, b: WatchedTenant): boolean =>
  a.keyId === b.keyId && wantedCollections(a.target).join() === wantedCollections(b.target).join();

/** A collection of `t` about to be watched: no turn yet, due for its first probe. */
export const newWatched = (t: WatchedTenant, collection: CollectionSlug, meter: WatchMeter): Watched => ({
  tenant: t,
  collection,
  meter,
  pace: STILL,
  intervalMs: 0,
  timer: undefined,
  busy: false,
  dropped: false,
  failing: false,
  lastChanged: false,
  countedAt: 0,
  rotation: null,
  quietReads: 1,
  lastProbeAt: null,
  lastChangeAt: null,
  lastFreshAt: null,
  probes: 0,
  dirty: true,
  unexplained: null,
});

/**
 * Records a turn of `e` started at `started` that ended with `outcome`: its pace, its count of probes and the times
 * `status` shows. Returns what the turn found, as its next interval sees it.
 */
export function recordTurn(e: Watched, outcome: TickOutcome, started: number): TurnFound {
  const changed = outcome === 'changed' || outcome === 'deleted';
  e.lastChanged = changed;
  e.pace = paceAfter(e.pace, started, changed ? 1 : 0);
  e.probes++;
  e.lastProbeAt = new Date(started).toISOString();
  if (changed) e.lastChangeAt = e.lastProbeAt;
  if (outcome !== 'failed' && outcome !== 'locked') e.lastFreshAt = e.lastProbeAt;
  e.dirty = true;
  return changed ? 'changed' : outcome === 'locked' || outcome === 'failed' ? 'held' : 'quiet';
}

/** What `status` shows of `e`, watched by `holder`. */
export const statusRow = (e: Watched, holder: string): WatchStatusRow => ({
  tenant: e.tenant.target.slug as TenantSlug,
  collection: e.collection,
  holder,
  lastProbeAt: e.lastProbeAt,
  lastChangeAt: e.lastChangeAt,
  lastFreshAt: e.lastFreshAt,
  intervalMs: e.intervalMs,
  probes: e.probes,
});
