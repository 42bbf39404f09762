import pLimit from 'p-limit';
import { describeError } from '../errors.js';
import type { PartnersClient } from '../partners/partners-client.js';
import { leaseHolder } from './collection-lease.js';
import type { ReadRoutes } from './discover-routes.js';
import { type ScheduleClock, type Timer, wallClock } from './schedule-clock.js';
import { wantedCollections } from './wanted-collections.js';
import { WatchKeys } from './watch-meter.js';
import { TenantOwnership } from './watch-owners.js';
import { WATCH_STATUS_EVERY_MS, type WatchDeps } from './watch-port.js';
import { WatchTurns } from './watch-turns.js';
import { limitsOf, newWatched, sameWatch, statusRow, type Watched, type WatchedTenant } from './watched-collection.js';

export type { WatchDeps } from './watch-port.js';
export type { WatchedTenant } from './watched-collection.js';

/** How long a worker's watch of a tenant lasts unless renewed: a dead worker's tenants are taken over within 25 s. */
const DEFAULT_OWNER_TTL_MS = 20_000;
/** How soon the collections of a tenant taken over from another worker are first probed (spread). */
const TAKEOVER_SPREAD_MS = 5_000;

/** One watch while it runs: the collections watched, over the keys' meters and the tenants' ownership. */
class Watch {
  readonly clock: ScheduleClock;
  readonly random: () => number;
  /** The tenants this process watches now, with their collections. */
  readonly watched = new Map<string, { tenant: WatchedTenant; readonly entries: readonly Watched[] }>();
  readonly owners: TenantOwnership<WatchedTenant>;
  readonly keys = new WatchKeys();
  /** Tenants being started (their routes discovered), a few at a time. */
  readonly starting = new Set<string>();
  readonly starts = pLimit(8);
  /** Clients whose key was refused: their tenants are not watched until a reload gives them new clients. */
  readonly refused = new WeakSet<PartnersClient>();
  readonly turns: WatchTurns;

  constructor(
    readonly deps: WatchDeps,
    readonly signal: AbortSignal,
  ) {
    this.clock = deps.clock ?? wallClock;
    this.random = deps.random ?? Math.random;
    this.owners = new TenantOwnership({
      rows: deps.rows,
      clock: this.clock,
      holder: deps.holder ?? leaseHolder(),
      ttlMs: deps.ownerTtlMs ?? DEFAULT_OWNER_TTL_MS,
      wanted: () => deps.tenants().filter((t) => !this.refused.has(t.client)),
      slugOf: (t) => t.target.slug,
      claimed: (tenants, owned) => this.claimed(tenants, owned),
    });
    const { clock, keys, owners } = this;
    this.turns = new WatchTurns({ deps, clock, signal, keys, owners, refused: (e, err) => this.refuse(e.tenant, err) });
  }

  /** A refused key stops the watch of its tenants (one line) until a reload gives them new clients. */
  refuse(t: WatchedTenant, err: unknown): void {
    if (!this.refused.has(t.client))
      this.deps.log.error({ tenant: t.target.slug, err: describeError(err) }, 'watch stopped: key refused');
    this.refused.add(t.client);
    this.drop(t.target.slug);
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
      e.timer?.cancel();
      e.dropped = true;
    }
    this.keys.addQuietReads(w.tenant.keyId, -w.entries.reduce((n, e) => n + e.quietReads, 0));
    this.watched.delete(slug);
  }

  /** After a claim: drops the tenants lost, brings the others to the current settings, starts the ones gained. */
  claimed(tenants: readonly WatchedTenant[], owned: ReadonlySet<string>): void {
    for (const slug of this.watched.keys()) if (!owned.has(slug)) this.drop(slug);
    this.follow(tenants);
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
    const meter = this.keys.meterOf(t.keyId, limitsOf(t));
    const collections = wantedCollections(t.target).filter((c) => routes.list.has(c));
    if (this.signal.aborted || this.watched.has(slug) || !this.owners.owns(slug)) return;
    const entries = collections.map((collection) => newWatched(t, collection, meter));
    this.watched.set(slug, { tenant: t, entries });
    this.keys.addQuietReads(t.keyId, entries.length);
    const idle = this.turns.idleOf(t);
    for (const e of entries) {
      e.intervalMs = idle;
      this.turns.schedule(e, this.random() * this.firstSpread(idle));
    }
  }

  /**
   * Over how long a tenant's first probes are spread: at start, 5 ms per collection watched in all (a few seconds
   * for a few tenants, a minute for a thousand) within the idle interval; after a takeover, within 5 s.
   */
  firstSpread(idle: number): number {
    if (this.owners.takingOver()) return Math.min(idle, TAKEOVER_SPREAD_MS);
    return Math.min(idle, Math.max(2000, this.keys.quietReadsInAll() * 5));
  }

  /** Every watched collection. */
  *all(): Iterable<Watched> {
    for (const w of this.watched.values()) yield* w.entries;
  }

  /** Writes what `status` shows for the collections that moved, and reports each key's share. */
  async flush(): Promise<void> {
    // Not while the leases may have expired (a pause): the collections may be another worker's by now.
    const moved = this.owners.fresh() ? [...this.all()].filter((e) => e.dirty) : [];
    for (const e of moved) e.dirty = false;
    const rows = moved.map((e) => statusRow(e, this.owners.holder));
    if (rows.length > 0) await this.deps.rows.saveWatchStatus(rows, new Date(this.clock.now()).toISOString());
    for (const share of this.keys.shares(this.clock.now())) this.deps.onShare?.(share);
  }

  async stop(): Promise<void> {
    for (const e of this.all()) e.timer?.cancel();
    await this.turns.settled();
    await this.flush().catch(() => undefined);
    await this.owners.release().catch(() => undefined);
  }
}

/**
 * Runs `f` every `ms` on `clock`, the first at once, each run `ms` after the last one ended, until `signal` aborts;
 * failures are logged. Resolves once stopped and a run under way has ended (nothing it does comes after the stop).
 */
function every(w: Watch, ms: number, what: string, f: () => Promise<void>): Promise<void> {
  const { clock, signal } = w;
  return new Promise((resolve) => {
    let timer: Timer | undefined;
    let running: Promise<void> = Promise.resolve();
    const tick = () => {
      if (signal.aborted) return running;
      running = f()
        .catch((err: unknown) => {
          if (!signal.aborted) w.deps.log.warn({ err: describeError(err) }, `watch: ${what} failed`);
        })
        .finally(() => {
          if (!signal.aborted) timer = clock.after(ms, tick);
        });
      return running;
    };
    const stop = () => {
      timer?.cancel();
      void running.then(() => resolve());
    };
    if (signal.aborted) return stop();
    signal.addEventListener('abort', stop, { once: true });
    timer = clock.after(0, tick);
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
    every(w, w.owners.renewEveryMs(), 'claiming tenants', () => w.owners.claim()),
    every(w, WATCH_STATUS_EVERY_MS, 'writing status', () => w.flush()),
  ]);
  await w.stop();
}
