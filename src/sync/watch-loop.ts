import pLimit from 'p-limit';
import { describeError, UnderstudyError } from '../errors.js';
import type { Logger } from '../log.js';
import { type CallOptions, type PartnersClient, withCallOptions } from '../partners/partners-client.js';
import type { RateBudget } from '../partners/rate-gate.js';
import { type Clock, systemClock } from '../vocabulary/clock.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import type { TenantSlug } from '../vocabulary/ids.js';
import type { WatchKnobs } from '../vocabulary/watch-knobs.js';
import { leaseHolder } from './collection-lease.js';
import type { ReadRoutes } from './discover-routes.js';
import type { CollectionReport, SyncDeps, TenantTarget } from './sync-collection.js';
import { wantedCollections } from './wanted-collections.js';
import { type TickOutcome, tickCollection } from './watch-collection.js';
import { WatchMeter } from './watch-meter.js';
import { hotIntervalMs, idleIntervalMs, type Pace, paceAfter, probeIntervalMs, rateAt, STILL } from './watch-pace.js';
import type { WatchStatusRow, WatchStore } from './watch-port.js';

/** A tenant to keep live, with its client, knobs and key. */
export interface WatchedTenant {
  readonly target: TenantTarget;
  readonly client: PartnersClient;
  readonly knobs: WatchKnobs;
  readonly budget: RateBudget;
  /** Names the key (its hash, as metrics and Redis name it, never the key): the tenants on one key share one meter. */
  readonly keyId: string;
}

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
  /** Told every few seconds of the share of each key's read budget watch used over its last window. */
  readonly onShare?: (e: { key: string; share: number }) => void;
  /** Turns under way at once, across tenants (default 16). */
  readonly concurrency?: number;
  /** How long a worker's watch of a tenant lasts unless renewed; renewed every third of it (default 30 s). */
  readonly ownerTtlMs?: number;
  /** Who watches, in `watch_owners` and `watch_state`; default host:pid:random. */
  readonly holder?: string;
}

/** How often what `status` shows is written to the mirror, and the share reported. */
const FLUSH_MS = 5_000;
const DEFAULT_OWNER_TTL_MS = 30_000;

/** One watched collection of one tenant. */
interface Watched {
  readonly tenant: WatchedTenant;
  readonly collection: CollectionSlug;
  readonly meter: WatchMeter;
  pace: Pace;
  intervalMs: number;
  timer: NodeJS.Timeout | undefined;
  busy: boolean;
  /** Its tenant is no longer watched here (lost, refused, reloaded): no further turn. */
  dropped: boolean;
  /** Its last turn failed (logged once per spell of failures). */
  failing: boolean;
  lastProbeAt: string | null;
  lastChangeAt: string | null;
  probes: number;
  dirty: boolean;
  unexplained: string | null;
}

/** Everything one watch holds while it runs. */
class Watch {
  readonly clock: Clock;
  readonly holder: string;
  readonly limit: ReturnType<typeof pLimit>;
  /** The tenants this process watches now, with their collections. */
  readonly watched = new Map<string, { readonly tenant: WatchedTenant; readonly entries: readonly Watched[] }>();
  /** The tenants this process holds the watch of, as of the last claim. */
  owned = new Set<TenantSlug>();
  /** Tenants being started (their routes discovered), a few at a time. */
  readonly starting = new Set<string>();
  readonly starts = pLimit(8);
  /** Watched collections per key (their idle interval shares the key's idle budget). */
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
  }

  now(): number {
    return this.clock.now();
  }

  meterOf(t: WatchedTenant): WatchMeter {
    let m = this.meters.get(t.keyId);
    if (!m) {
      m = new WatchMeter(t.budget.reads, t.budget.windowMs, t.knobs.maxShare);
      this.meters.set(t.keyId, m);
    }
    return m;
  }

  /** The tenant's client, each attempt counted by its key's meter. */
  metered(t: WatchedTenant, meter: WatchMeter): PartnersClient {
    return withCallOptions(
      t.client,
      (opts): CallOptions => ({
        ...opts,
        onAttempt: () => {
          meter.count(this.now());
          opts.onAttempt?.();
        },
      }),
    );
  }

  /** The idle interval of each collection of `t`: its key's collections over every watched tenant share it. */
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
    const wait = e.meter.waitFor(this.now(), 2);
    if (wait > 0) {
      this.schedule(e, wait);
      return;
    }
    e.busy = true;
    const running = this.limit(() => this.runTurn(e)).finally(() => {
      e.busy = false;
      this.turns.delete(running);
    });
    this.turns.add(running);
  }

  async runTurn(e: Watched): Promise<void> {
    if (this.signal.aborted || e.dropped) return;
    const started = this.now();
    let outcome: TickOutcome = 'failed';
    let report: CollectionReport | undefined;
    try {
      const client = this.metered(e.tenant, e.meter);
      const routes = await this.deps.routesOf(e.tenant.target.slug, this.signal);
      const tick = await tickCollection(
        {
          sync: this.deps.syncDeps(client),
          rows: this.deps.rows,
          target: e.tenant.target,
          routes,
          signal: this.signal,
          unexplained: e.unexplained,
        },
        e.collection,
      );
      outcome = tick.outcome;
      report = tick.report;
      e.unexplained = tick.unexplained;
    } catch (err) {
      if (this.signal.aborted) return;
      this.failed(e, err);
    }
    if (outcome !== 'failed' && e.failing) {
      e.failing = false;
      this.deps.log.info({ tenant: e.tenant.target.slug, collection: e.collection }, 'watch probe works again');
    }
    const changed = outcome === 'changed' || outcome === 'deleted';
    e.pace = paceAfter(e.pace, started, changed);
    e.probes++;
    e.lastProbeAt = new Date(started).toISOString();
    if (changed) e.lastChangeAt = e.lastProbeAt;
    e.dirty = true;
    const hot = hotIntervalMs(e.tenant.knobs);
    e.intervalMs =
      outcome === 'locked' || outcome === 'failed'
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

  drop(slug: string): void {
    const w = this.watched.get(slug);
    if (!w) return;
    for (const e of w.entries) {
      clearTimeout(e.timer);
      e.dropped = true;
    }
    this.perKey.set(w.tenant.keyId, (this.perKey.get(w.tenant.keyId) ?? 0) - w.entries.length);
    this.watched.delete(slug);
  }

  /** Takes (or renews) the watch of the configured tenants; starts the ones gained, drops the ones lost. */
  async claim(): Promise<void> {
    const tenants = this.deps.tenants().filter((t) => !this.refused.has(t.client));
    const owned = await this.deps.rows.claimWatch(
      tenants.map((t) => t.target.slug),
      this.holder,
      this.deps.ownerTtlMs ?? DEFAULT_OWNER_TTL_MS,
    );
    const current = new Map(tenants.map((t) => [t.target.slug as string, t]));
    // A reload builds each tenant's client anew: its collections start again with the new settings.
    for (const [slug, w] of this.watched)
      if (!owned.has(slug as TenantSlug) || current.get(slug)?.client !== w.tenant.client) this.drop(slug);
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
    const entries = collections.map(
      (collection): Watched => ({
        tenant: t,
        collection,
        meter,
        pace: STILL,
        intervalMs: 0,
        timer: undefined,
        busy: false,
        dropped: false,
        failing: false,
        lastProbeAt: null,
        lastChangeAt: null,
        probes: 0,
        dirty: true,
        unexplained: null,
      }),
    );
    this.watched.set(slug, { tenant: t, entries });
    this.perKey.set(t.keyId, (this.perKey.get(t.keyId) ?? 0) + entries.length);
    const idle = this.idleOf(t);
    for (const e of entries) {
      e.intervalMs = idle;
      this.schedule(e, Math.random() * idle);
    }
  }

  /** Every watched collection. */
  *all(): Iterable<Watched> {
    for (const w of this.watched.values()) yield* w.entries;
  }

  /** Writes what `status` shows for the collections that moved, and reports each key's share. */
  async flush(): Promise<void> {
    const rows: WatchStatusRow[] = [];
    for (const e of this.all()) {
      if (!e.dirty) continue;
      e.dirty = false;
      rows.push({
        tenant: e.tenant.target.slug as TenantSlug,
        collection: e.collection,
        holder: this.holder,
        lastProbeAt: e.lastProbeAt,
        lastChangeAt: e.lastChangeAt,
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
 * watches is a lease in the mirror (`watch_owners`), renewed every third of `ownerTtlMs`: two workers never watch
 * one tenant, and a dead worker's tenants are taken over once its lease has expired. Resolves once stopped: turns
 * under way finish (a pass commits its page and stops), the status is written, and the leases are given up.
 */
export async function watchTenants(deps: WatchDeps, signal: AbortSignal): Promise<void> {
  const w = new Watch(deps, signal);
  const ownerTtl = deps.ownerTtlMs ?? DEFAULT_OWNER_TTL_MS;
  await Promise.all([
    every(Math.max(100, Math.floor(ownerTtl / 3)), signal, deps.log, 'claiming tenants', () => w.claim()),
    every(FLUSH_MS, signal, deps.log, 'writing status', () => w.flush()),
  ]);
  await w.stop();
}
