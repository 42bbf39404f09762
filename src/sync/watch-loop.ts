import pLimit from 'p-limit';
import { describeError, UnderstudyError } from '../errors.js';
import type { Logger } from '../log.js';
import { type CallOptions, type PartnersClient, withCallOptions } from '../partners/partners-client.js';
import { type Clock, systemClock } from '../vocabulary/clock.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import type { TenantSlug } from '../vocabulary/ids.js';
import { leaseHolder } from './collection-lease.js';
import type { ReadRoutes } from './discover-routes.js';
import type { CollectionReport, SyncDeps } from './sync-collection.js';
import { wantedCollections } from './wanted-collections.js';
import { type TickOutcome, tickCollection } from './watch-collection.js';
import { type Hold, WatchMeter } from './watch-meter.js';
import { hotIntervalMs, idleIntervalMs, paceAfter, probeIntervalMs, rateAt } from './watch-pace.js';
import { WATCH_STATUS_EVERY_MS, type WatchStatusRow, type WatchStore } from './watch-port.js';
import { limitsOf, newWatched, sameWatch, type Watched, type WatchedTenant } from './watched-collection.js';

export type { WatchedTenant } from './watched-collection.js';

export interface WatchDeps {
  /** The tenants to watch; asked again at each ownership round (a reload changes them). */
  readonly tenants: () => readonly WatchedTenant[];
  /** The sync deps of a tenant's runs, given its (metered) client. */
  readonly syncDeps: (client: PartnersClient) => SyncDeps;
  readonly rows: WatchStore;
  readonly routesOf: (slug: string, signal: AbortSignal) => Promise<ReadRoutes>;
  readonly log: Logger;
  readonly clock?: Clock;
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

/**
 * How long a worker's watch of a tenant lasts unless renewed. Renewed, and asked for by the others, every quarter of
 * it: a dead worker's tenants are taken over within 25 s, inside the 30 s lease period of the collections' runs.
 */
const DEFAULT_OWNER_TTL_MS = 20_000;
/**
 * What a turn may cost at most, most of the time: the probe, a range of the rotation, a pass's page, a search (a
 * count, a range, a look-up).
 */
const TURN_READS = 7;
/** How soon the collections of a tenant taken over from another worker are first probed (spread). */
const TAKEOVER_SPREAD_MS = 5_000;

/** Everything one watch holds while it runs. */
class Watch {
  readonly clock: Clock;
  readonly holder: string;
  readonly limit: ReturnType<typeof pLimit>;
  /** The tenants this process watches now, with their collections. */
  readonly watched = new Map<string, { tenant: WatchedTenant; readonly entries: readonly Watched[] }>();
  /** Claims made: the first one starts the tenants spread over their idle interval, later ones (takeovers) sooner. */
  claims = 0;
  /** The tenants this process holds the watch of, as of the last claim. */
  owned = new Set<TenantSlug>();
  /** The claim under way, shared by the claiming rounds and the turns that wait for it. */
  claiming: Promise<void> | null = null;
  /** When the last claim that succeeded started (this process' clock): its leases last `ownerTtl` from about then. */
  claimedAt = Number.NEGATIVE_INFINITY;
  readonly ownerTtl: number;
  /** Tenants being started (their routes discovered), a few at a time. */
  readonly starting = new Set<string>();
  readonly starts = pLimit(8);
  /** The reads of a quiet turn of every watched collection, per key (their idle intervals share its idle budget). */
  readonly perKey = new Map<string, number>();
  readonly meters = new Map<string, WatchMeter>();
  /** Clients whose key was refused: their tenants are not watched until a reload gives them new clients. */
  readonly refused = new WeakSet<PartnersClient>();
  readonly turns = new Set<Promise<void>>();

  constructor(
    readonly deps: WatchDeps,
    readonly signal: AbortSignal,
  ) {
    this.clock = deps.clock ?? systemClock;
    this.holder = deps.holder ?? leaseHolder();
    this.limit = pLimit(deps.concurrency ?? 16);
    this.ownerTtl = deps.ownerTtlMs ?? DEFAULT_OWNER_TTL_MS;
  }

  now(): number {
    return this.clock.now();
  }

  meterOf(t: WatchedTenant): WatchMeter {
    let m = this.meters.get(t.keyId);
    if (!m) {
      m = new WatchMeter(limitsOf(t));
      this.meters.set(t.keyId, m);
    }
    return m;
  }

  /** The tenant's client for one turn: each attempt counted by its key's meter, from the turn's hold first. */
  metered(t: WatchedTenant, meter: WatchMeter, hold: Hold): PartnersClient {
    return withCallOptions(
      t.client,
      (opts): CallOptions => ({
        ...opts,
        onAttempt: () => {
          meter.count(this.now(), hold);
          opts.onAttempt?.();
        },
      }),
    );
  }

  /** Keeps what a quiet turn of `e` reads, and its key's sum of them, up to date. */
  quietReadsOf(e: Watched, reads: number): void {
    if (e.dropped || reads === e.quietReads) return;
    const keyId = e.tenant.keyId;
    this.perKey.set(keyId, (this.perKey.get(keyId) ?? 0) + reads - e.quietReads);
    e.quietReads = reads;
  }

  /** The idle interval of each collection of `t`: the quiet turns of its key's collections share the idle budget. */
  idleOf(t: WatchedTenant): number {
    const n = this.perKey.get(t.keyId) ?? 0;
    return idleIntervalMs(t.knobs, n, (t.budget.reads * 60_000) / t.budget.windowMs);
  }

  schedule(e: Watched, inMs: number): void {
    if (this.signal.aborted) return;
    clearTimeout(e.timer);
    e.timer = setTimeout(() => this.turn(e), Math.max(0, Math.round(inMs)));
  }

  /** Starts a collection's turn (through the concurrency limit), unless its key's share is spent: then later. */
  turn(e: Watched): void {
    e.timer = undefined;
    if (this.signal.aborted || e.busy) return;
    e.busy = true;
    const running = this.limit(() => this.runTurn(e)).finally(() => {
      e.busy = false;
      this.turns.delete(running);
    });
    this.turns.add(running);
  }

  /**
   * A turn, once the concurrency limit lets it run: unless its key's share cannot hold a turn's usual cost now (the
   * turn then waits), it holds that much of the key's window, probes, and passes or searches when the probe says so.
   */
  async runTurn(e: Watched): Promise<void> {
    if (this.signal.aborted || e.dropped) return;
    if (!(await this.stillOwns(e))) return;
    // The tenant's settings as of the last reload: its maxShare and budget hold this turn.
    e.meter.apply(limitsOf(e.tenant));
    const hold = e.meter.hold(this.now(), TURN_READS);
    if (!hold) {
      // The key's share is spent: the collections probed most often ask again first when it frees.
      this.schedule(e, e.meter.waitFor(this.now(), TURN_READS) + Math.min(3000, e.intervalMs / 10));
      return;
    }
    try {
      await this.probeAndFollow(e, hold);
    } finally {
      e.meter.release(hold);
    }
  }

  /**
   * Whether this process still watches `e`'s tenant. When its lease may have expired by this process' clock (no
   * claim has succeeded for half the lease: the process was paused, stalled, or could not reach the mirror), the
   * mirror is asked first (a claim, shared by the turns that wait for it): another worker may have taken the tenant
   * over meanwhile, and its turns are then not this process' to make. A claim that fails leaves the turn for later.
   */
  async stillOwns(e: Watched): Promise<boolean> {
    if (this.now() - this.claimedAt >= this.ownerTtl / 2) {
      try {
        await this.claim();
      } catch {
        // The claiming rounds log the failure; this turn waits for one that succeeds.
        if (!e.dropped) this.schedule(e, Math.max(e.intervalMs, hotIntervalMs(e.tenant.knobs)));
        return false;
      }
    }
    return !e.dropped && this.owned.has(e.tenant.target.slug as TenantSlug);
  }

  async probeAndFollow(e: Watched, hold: Hold): Promise<void> {
    const started = this.now();
    // A collection that changed at its last turn is passed alone (one read), its count probed once an idle interval.
    const passOnly = e.lastChanged && started - e.countedAt < this.idleOf(e.tenant);
    if (!passOnly) e.countedAt = started;
    let outcome: TickOutcome = 'failed';
    let report: CollectionReport | undefined;
    try {
      const client = this.metered(e.tenant, e.meter, hold);
      const routes = await this.deps.routesOf(e.tenant.target.slug, this.signal);
      const tick = await tickCollection(
        {
          sync: this.deps.syncDeps(client),
          rows: this.deps.rows,
          target: e.tenant.target,
          routes,
          signal: this.signal,
          unexplained: e.unexplained,
          rotation: e.rotation,
          passOnly,
        },
        e.collection,
      );
      outcome = tick.outcome;
      report = tick.report;
      e.unexplained = tick.unexplained;
      e.rotation = tick.rotation;
      if (tick.rotating !== undefined) this.quietReadsOf(e, tick.rotating ? 2 : 1);
    } catch (err) {
      if (this.signal.aborted) return;
      this.failed(e, err);
    }
    if (outcome !== 'failed' && e.failing) {
      e.failing = false;
      this.deps.log.info({ tenant: e.tenant.target.slug, collection: e.collection }, 'watch probe works again');
    }
    const changed = outcome === 'changed' || outcome === 'deleted';
    e.lastChanged = changed;
    e.pace = paceAfter(e.pace, started, changed ? 1 : 0);
    e.probes++;
    e.lastProbeAt = new Date(started).toISOString();
    if (changed) e.lastChangeAt = e.lastProbeAt;
    if (outcome !== 'failed' && outcome !== 'locked') e.lastFreshAt = e.lastProbeAt;
    e.dirty = true;
    const hot = hotIntervalMs(e.tenant.knobs);
    // A change found is often the first of several: the next probe comes at the hot interval, and the rate decides
    // after that (a quiet probe widens it again).
    e.intervalMs = changed
      ? hot
      : outcome === 'locked' || outcome === 'failed'
        ? Math.max(e.intervalMs, hot)
        : probeIntervalMs(rateAt(e.pace, this.now()), hot, this.idleOf(e.tenant));
    this.deps.onProbe?.({
      tenant: e.tenant.target.slug,
      collection: e.collection,
      outcome,
      ...(report ? { report } : {}),
    });
    if (!e.dropped) this.schedule(e, e.intervalMs);
  }

  /** A failed turn: logged; a refused key stops the watch of its tenants (one line) until the config changes. */
  failed(e: Watched, err: unknown): void {
    const slug = e.tenant.target.slug;
    if (err instanceof UnderstudyError && err.code === 'US_AUTH') {
      if (!this.refused.has(e.tenant.client))
        this.deps.log.error({ tenant: slug, err: describeError(err) }, 'watch stopped: key refused');
      this.refused.add(e.tenant.client);
      this.drop(slug);
      return;
    }
    // Once per spell of failures (an upstream down for an hour would otherwise log every probe of it).
    if (!e.failing)
      this.deps.log.warn({ tenant: slug, collection: e.collection, err: describeError(err) }, 'watch probe failed');
    e.failing = true;
  }

  /**
   * Brings the watched tenants to the config's current settings (after a reload): in place, so that each
   * collection's next turn applies the new knobs, client and budget, and keeps its pace, rotation and what its
   * searches could not explain. A tenant no longer watched is dropped, as is one whose key or collections changed
   * (the next claim starts it again).
   */
  follow(tenants: readonly WatchedTenant[]): void {
    if (this.signal.aborted) return;
    const current = new Map(tenants.map((t) => [t.target.slug as string, t]));
    for (const [slug, w] of this.watched) {
      const t = current.get(slug);
      if (t === w.tenant) continue;
      if (!t || !sameWatch(t, w.tenant)) {
        this.drop(slug);
        continue;
      }
      w.tenant = t;
      for (const e of w.entries) e.tenant = t;
    }
  }

  drop(slug: string): void {
    const w = this.watched.get(slug);
    if (!w) return;
    for (const e of w.entries) {
      clearTimeout(e.timer);
      e.dropped = true;
    }
    const reads = w.entries.reduce((n, e) => n + e.quietReads, 0);
    this.perKey.set(w.tenant.keyId, (this.perKey.get(w.tenant.keyId) ?? 0) - reads);
    this.watched.delete(slug);
  }

  /** Takes (or renews) the watch of the configured tenants, one claim at a time (a claim under way is shared). */
  claim(): Promise<void> {
    this.claiming ??= this.claimOnce().finally(() => {
      this.claiming = null;
    });
    return this.claiming;
  }

  /** One claim: starts the tenants gained, drops the ones lost, and brings the others to the current settings. */
  async claimOnce(): Promise<void> {
    this.claims++;
    const started = this.now();
    const tenants = this.deps.tenants().filter((t) => !this.refused.has(t.client));
    const owned = await this.deps.rows.claimWatch(
      tenants.map((t) => t.target.slug),
      this.holder,
      this.ownerTtl,
    );
    this.claimedAt = started;
    for (const slug of this.watched.keys()) if (!owned.has(slug as TenantSlug)) this.drop(slug);
    this.follow(tenants);
    this.owned = owned;
    // Started apart (a first claim may bring a thousand tenants to discover): the claim's renewals keep their pace.
    for (const t of tenants) {
      const slug = t.target.slug;
      if (!owned.has(slug) || this.watched.has(slug) || this.starting.has(slug)) continue;
      this.starting.add(slug);
      void this.starts(() => this.start(t)).finally(() => this.starting.delete(slug));
    }
  }

  /** Starts watching a tenant's listed collections (each first probed within its idle interval, spread). */
  async start(t: WatchedTenant): Promise<void> {
    const slug = t.target.slug;
    if (this.watched.has(slug)) return;
    let routes: ReadRoutes;
    try {
      routes = await this.deps.routesOf(slug, this.signal);
    } catch (err) {
      if (!this.signal.aborted)
        this.deps.log.warn({ tenant: slug, err: describeError(err) }, 'watch: routes not discovered');
      return;
    }
    const meter = this.meterOf(t);
    const collections = wantedCollections(t.target).filter((c) => routes.list.has(c));
    if (this.signal.aborted || this.watched.has(slug) || !this.owned.has(slug)) return;
    const entries = collections.map((collection) => newWatched(t, collection, meter));
    this.watched.set(slug, { tenant: t, entries });
    this.perKey.set(t.keyId, (this.perKey.get(t.keyId) ?? 0) + entries.length);
    const idle = this.idleOf(t);
    for (const e of entries) {
      e.intervalMs = idle;
      this.schedule(e, Math.random() * this.firstSpread(idle));
    }
  }

  /**
   * Over how long a tenant's first probes are spread: at start, 5 ms per collection watched in all (a few seconds
   * for a few tenants, a minute for a thousand) within the idle interval; after a takeover, within 5 s.
   */
  firstSpread(idle: number): number {
    if (this.claims > 1) return Math.min(idle, TAKEOVER_SPREAD_MS);
    let n = 0;
    for (const count of this.perKey.values()) n += count;
    return Math.min(idle, Math.max(2000, n * 5));
  }

  /** Every watched collection. */
  *all(): Iterable<Watched> {
    for (const w of this.watched.values()) yield* w.entries;
  }

  /** Writes what `status` shows for the collections that moved, and reports each key's share. */
  async flush(): Promise<void> {
    const rows: WatchStatusRow[] = [];
    // Not while the leases may have expired (a pause): the collections may be another worker's by now.
    const current = this.now() - this.claimedAt < this.ownerTtl / 2;
    for (const e of current ? this.all() : []) {
      if (!e.dirty) continue;
      e.dirty = false;
      rows.push({
        tenant: e.tenant.target.slug as TenantSlug,
        collection: e.collection,
        holder: this.holder,
        lastProbeAt: e.lastProbeAt,
        lastChangeAt: e.lastChangeAt,
        lastFreshAt: e.lastFreshAt,
        intervalMs: e.intervalMs,
        probes: e.probes,
      });
    }
    if (rows.length > 0) await this.deps.rows.saveWatchStatus(rows, new Date(this.now()).toISOString());
    for (const [key, meter] of this.meters) this.deps.onShare?.({ key, share: meter.share(this.now()) });
  }

  async stop(): Promise<void> {
    for (const e of this.all()) clearTimeout(e.timer);
    await Promise.allSettled([...this.turns]);
    await this.flush().catch(() => undefined);
    await this.deps.rows.releaseWatch(this.holder).catch(() => undefined);
  }
}

/** Runs `f` every `ms` until `signal` aborts, each run after the last one ended; failures are logged. */
function every(ms: number, signal: AbortSignal, log: Logger, what: string, f: () => Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    let running: Promise<void> = Promise.resolve();
    const tick = () => {
      if (signal.aborted) return;
      running = f()
        .catch((err: unknown) => {
          if (!signal.aborted) log.warn({ err: describeError(err) }, `watch: ${what} failed`);
        })
        .finally(() => {
          if (!signal.aborted) timer = setTimeout(tick, ms);
        });
    };
    // Resolves once a run under way has ended: nothing it does (a claim) comes after the stop's release.
    const stop = () => {
      clearTimeout(timer);
      void running.then(() => resolve());
    };
    if (signal.aborted) return stop();
    signal.addEventListener('abort', stop, { once: true });
    tick();
  });
}

/**
 * Keeps the configured tenants live until `signal` aborts (docs/watch.md): each listed collection of each tenant
 * this process watches is probed at an interval that follows its recent change rate (from half the `hot` target
 * to half the `all` target, widened to keep the probes of a quiet key within `idleShare`), a probe that finds a
 * change starts the collection's incremental passes at once, and a count that no longer matches starts a search
 * for the rows gone. Every request watch makes goes through the key's rate gate and is counted by the key's meter,
 * which holds the next probe back while watch has used `maxShare` of the key's window. Which tenants this process
 * watches is a lease in the mirror (`watch_owners`), renewed every quarter of `ownerTtlMs` (20 s): two workers never watch
 * one tenant, and a dead worker's tenants are taken over once its lease has expired. Resolves once stopped: turns
 * under way finish (a pass commits its page and stops), the status is written, and the leases are given up.
 */
export async function watchTenants(deps: WatchDeps, signal: AbortSignal): Promise<void> {
  const w = new Watch(deps, signal);
  deps.onReload?.(() => w.follow(deps.tenants()));
  await Promise.all([
    every(Math.max(100, Math.floor(w.ownerTtl / 4)), signal, deps.log, 'claiming tenants', () => w.claim()),
    every(WATCH_STATUS_EVERY_MS, signal, deps.log, 'writing status', () => w.flush()),
  ]);
  await w.stop();
}
