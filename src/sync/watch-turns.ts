import pLimit from 'p-limit';
import { describeError, hasCode } from '../errors.js';
import { type CallOptions, type PartnersClient, withCallOptions } from '../partners/partners-client.js';
import type { ScheduleClock } from './schedule-clock.js';
import type { CollectionReport } from './sync-collection.js';
import { type TickOutcome, tickCollection } from './watch-collection.js';
import type { Hold, WatchKeys, WatchMeter } from './watch-meter.js';
import type { TenantOwnership } from './watch-owners.js';
import { hotIntervalMs, nextInterval } from './watch-pace.js';
import type { WatchDeps } from './watch-port.js';
import { limitsOf, recordTurn, type Watched, type WatchedTenant } from './watched-collection.js';

/** What the turns of a watch run over: its deps, clock, signal, the keys' meters and the tenants' ownership. */
export interface TurnsContext {
  readonly deps: WatchDeps;
  readonly clock: ScheduleClock;
  readonly signal: AbortSignal;
  readonly keys: WatchKeys;
  readonly owners: TenantOwnership<WatchedTenant>;
  /** Told when a turn finds its tenant's key refused: its tenants are then not watched until the config changes. */
  readonly refused: (e: Watched, err: unknown) => void;
}

/**
 * The turns of the watched collections: each on its own timer (the clock's), a few at a time, each held to its key's
 * share and to this process' watch of its tenant; after each, the next one is timed by what it found.
 */
export class WatchTurns {
  private readonly limit: ReturnType<typeof pLimit>;
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly ctx: TurnsContext) {
    this.limit = pLimit(ctx.deps.concurrency ?? 16);
  }

  private now(): number {
    return this.ctx.clock.now();
  }

  /** The idle interval of each collection of `t`: the quiet turns of its key's collections share the idle budget. */
  idleOf(t: WatchedTenant): number {
    return this.ctx.keys.idleInterval(t.keyId, t.knobs, t.budget);
  }

  /** Sets `e`'s next turn `inMs` from now (in place of any set before). */
  schedule(e: Watched, inMs: number): void {
    if (this.ctx.signal.aborted) return;
    e.timer?.cancel();
    e.timer = this.ctx.clock.after(inMs, () => this.turn(e));
  }

  /** Resolves once the turns under way have ended. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }

  /** Starts a collection's turn through the concurrency limit; returns it (none when one is under way). */
  private turn(e: Watched): Promise<void> | undefined {
    e.timer = undefined;
    if (this.ctx.signal.aborted || e.busy) return;
    e.busy = true;
    const running = this.limit(() => this.run(e)).finally(() => {
      e.busy = false;
      this.running.delete(running);
    });
    this.running.add(running);
    return running;
  }

  /**
   * A turn, once the concurrency limit lets it run: unless its key's share cannot hold a turn's usual cost now (the
   * turn then waits), it holds that much of the key's window, probes, and passes or searches when the probe says so.
   */
  private async run(e: Watched): Promise<void> {
    if (this.ctx.signal.aborted || e.dropped) return;
    if (!(await this.stillOwns(e))) return;
    // The tenant's settings as of the last reload: its maxShare and budget hold this turn.
    e.meter.apply(limitsOf(e.tenant));
    const hold = e.meter.holdTurn(this.now());
    if (!hold) return this.schedule(e, e.meter.turnBackoff(this.now(), e.intervalMs));
    try {
      await this.probeAndFollow(e, hold);
    } finally {
      e.meter.release(hold);
    }
  }

  /**
   * Whether this process still watches `e`'s tenant. When its lease may have expired, the mirror is asked first (a
   * claim, shared by the turns that wait for it): another worker may have taken the tenant over meanwhile. A claim
   * that fails leaves the turn for later (the claiming rounds log the failure).
   */
  private async stillOwns(e: Watched): Promise<boolean> {
    const { owners } = this.ctx;
    if (!owners.fresh()) {
      try {
        await owners.claim();
      } catch {
        if (!e.dropped) this.schedule(e, Math.max(e.intervalMs, hotIntervalMs(e.tenant.knobs)));
        return false;
      }
    }
    return !e.dropped && owners.owns(e.tenant.target.slug);
  }

  private async probeAndFollow(e: Watched, hold: Hold): Promise<void> {
    const started = this.now();
    // A collection that changed at its last turn is passed alone (one read), its count probed once an idle interval.
    const passOnly = e.lastChanged && started - e.countedAt < this.idleOf(e.tenant);
    if (!passOnly) e.countedAt = started;
    let outcome: TickOutcome = 'failed';
    let report: CollectionReport | undefined;
    try {
      ({ outcome, report } = await this.tick(e, hold, passOnly));
    } catch (err) {
      if (this.ctx.signal.aborted) return;
      this.failed(e, err);
    }
    if (outcome !== 'failed' && e.failing) {
      e.failing = false;
      this.ctx.deps.log.info({ tenant: e.tenant.target.slug, collection: e.collection }, 'watch probe works again');
    }
    const found = recordTurn(e, outcome, started);
    const hot = hotIntervalMs(e.tenant.knobs);
    e.intervalMs = nextInterval(
      found,
      { current: e.intervalMs, pace: e.pace, hot, idle: this.idleOf(e.tenant) },
      this.now(),
    );
    const tenant = e.tenant.target.slug;
    this.ctx.deps.onProbe?.({ tenant, collection: e.collection, outcome, ...(report ? { report } : {}) });
    if (!e.dropped) this.schedule(e, e.intervalMs);
  }

  /** The probe of `e`, and the pass or search it calls for; keeps what the next turn goes on from. */
  private async tick(e: Watched, hold: Hold, passOnly: boolean) {
    const { deps, signal } = this.ctx;
    const routes = await deps.routesOf(e.tenant.target.slug, signal);
    const tick = await tickCollection(
      {
        sync: deps.syncDeps(this.metered(e.tenant, e.meter, hold)),
        rows: deps.rows,
        target: e.tenant.target,
        routes,
        signal,
        unexplained: e.unexplained,
        rotation: e.rotation,
        passOnly,
      },
      e.collection,
    );
    e.unexplained = tick.unexplained;
    e.rotation = tick.rotation;
    if (tick.rotating !== undefined) this.quietReadsOf(e, tick.rotating ? 2 : 1);
    return tick;
  }

  /** The tenant's client for one turn: each attempt counted by its key's meter, from the turn's hold first. */
  private metered(t: WatchedTenant, meter: WatchMeter, hold: Hold): PartnersClient {
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
  private quietReadsOf(e: Watched, reads: number): void {
    if (e.dropped || reads === e.quietReads) return;
    this.ctx.keys.addQuietReads(e.tenant.keyId, reads - e.quietReads);
    e.quietReads = reads;
  }

  /** A failed turn: logged; a refused key stops the watch of its tenants (one line) until the config changes. */
  private failed(e: Watched, err: unknown): void {
    const slug = e.tenant.target.slug;
    if (hasCode(err, 'US_AUTH')) {
      this.ctx.refused(e, err);
      return;
    }
    // Once per spell of failures (an upstream down for an hour would otherwise log every probe of it).
    if (!e.failing)
      this.ctx.deps.log.warn({ tenant: slug, collection: e.collection, err: describeError(err) }, 'watch probe failed');
    e.failing = true;
  }
}
