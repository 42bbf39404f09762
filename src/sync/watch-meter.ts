import type { RateBudget } from '../partners/rate-gate.js';
import type { WatchKnobs } from '../vocabulary/watch-knobs.js';
import { idleIntervalMs } from './watch-pace.js';

/**
 * What a turn may cost at most, most of the time: the probe, a range of the rotation, a pass's page, a search (a
 * count, a range, a look-up).
 */
export const TURN_READS = 7;
/** The most a turn the key's share could not hold waits past the time its cost fits again. */
const BACKOFF_SPREAD_MAX_MS = 3000;

/** What a meter holds watch to: the key's read budget and the share of it watch may use. */
export interface MeterLimits {
  readonly readsPerWindow: number;
  readonly windowMs: number;
  readonly maxShare: number;
}

/**
 * What watch has spent of one key's read budget: the times of its requests (probes, and the passes and searches
 * they start) over the last window. Watch asks it before each probe, so its share of the key stays within
 * `maxShare` however busy the collections are; the key's rate gate (shared in Redis) still guards the whole key.
 * Its limits are those last applied (each turn applies its tenant's, so a reload takes effect at the next turn).
 */
export class WatchMeter {
  private readonly sent: number[] = [];
  /** Requests held for turns under way and not sent yet. */
  private held = 0;
  readsPerWindow = 1;
  windowMs = 1;
  /** The most requests of watch the key's window may hold. */
  cap = 1;

  constructor(limits: MeterLimits) {
    this.apply(limits);
  }

  /** Holds watch to `limits` from now on (the requests already counted stay counted). */
  apply(limits: MeterLimits): void {
    this.readsPerWindow = limits.readsPerWindow;
    this.windowMs = limits.windowMs;
    this.cap = Math.max(1, Math.floor(limits.readsPerWindow * limits.maxShare));
  }

  private prune(now: number): void {
    let drop = 0;
    while (drop < this.sent.length && (this.sent[drop] as number) <= now - this.windowMs) drop++;
    if (drop > 0) this.sent.splice(0, drop);
  }

  /** Counts one request sent at `now`, taking it from `hold` when the turn holds some still. */
  count(now: number, hold?: Hold): void {
    this.sent.push(now);
    if (hold && hold.left > 0) {
      hold.left--;
      this.held--;
    }
  }

  /**
   * Holds `n` requests of the window for a turn about to run, when they fit under the cap with what was sent and
   * what other turns hold; null when they do not (the turn waits `waitFor(now, n)`). Turns run a few at a time:
   * checked one by one as each starts, together they never pass the cap by more than what a turn sends past its
   * hold.
   */
  hold(now: number, n: number): Hold | null {
    if (this.waitFor(now, n) > 0) return null;
    this.held += n;
    return { left: n };
  }

  /** Holds a turn's usual cost (`TURN_READS`) at `now`; null when the key's share cannot hold it now. */
  holdTurn(now: number): Hold | null {
    return this.hold(now, TURN_READS);
  }

  /**
   * How long a turn the key's share could not hold waits: until its cost fits, and a tenth of the collection's
   * interval (at most 3 s) more, so that the collections probed most often ask again first when the share frees.
   */
  turnBackoff(now: number, intervalMs: number): number {
    return this.waitFor(now, TURN_READS) + Math.min(BACKOFF_SPREAD_MAX_MS, intervalMs / 10);
  }

  /** Gives back what a finished turn held and did not send. */
  release(hold: Hold): void {
    this.held -= hold.left;
    hold.left = 0;
  }

  /** Requests of watch in the window ending at `now`. */
  used(now: number): number {
    this.prune(now);
    return this.sent.length;
  }

  /** The share of the key's read budget watch used over the window ending at `now`. */
  share(now: number): number {
    return this.used(now) / this.readsPerWindow;
  }

  /**
   * How long from `now` until watch may send `need` more requests within its cap: 0 when it may at once, else
   * until enough of its requests have left the window.
   */
  waitFor(now: number, need: number): number {
    const used = this.used(now) + this.held;
    const over = used + need - this.cap;
    if (over <= 0) return 0;
    // Held requests leave no sooner than they are sent: wait for the sent ones to leave, else a moment.
    const leaving = this.sent[Math.min(this.sent.length - 1, over - 1)];
    return leaving === undefined ? 1000 : Math.max(1, leaving + this.windowMs - now);
  }
}

/** Requests a turn holds in its key's window and has not sent yet. */
export interface Hold {
  left: number;
}

/**
 * The keys watch reads with: each key's meter (the tenants on one key share it), and what a quiet turn of every
 * watched collection reads per key (their idle intervals share the key's idle budget).
 */
export class WatchKeys {
  private readonly meters = new Map<string, WatchMeter>();
  private readonly quiet = new Map<string, number>();

  /** The meter of key `keyId`, made with `limits` the first time. */
  meterOf(keyId: string, limits: MeterLimits): WatchMeter {
    let m = this.meters.get(keyId);
    if (!m) {
      m = new WatchMeter(limits);
      this.meters.set(keyId, m);
    }
    return m;
  }

  /** Adds `reads` (negative: takes them away) to what a quiet turn of the key's collections reads. */
  addQuietReads(keyId: string, reads: number): void {
    this.quiet.set(keyId, (this.quiet.get(keyId) ?? 0) + reads);
  }

  /** What a quiet turn of every watched collection reads, over every key. */
  quietReadsInAll(): number {
    let n = 0;
    for (const count of this.quiet.values()) n += count;
    return n;
  }

  /** The idle interval of a collection on key `keyId`, given its tenant's knobs and budget. */
  idleInterval(keyId: string, knobs: WatchKnobs, budget: RateBudget): number {
    return idleIntervalMs(knobs, this.quiet.get(keyId) ?? 0, (budget.reads * 60_000) / budget.windowMs);
  }

  /** Each key's share of its read budget watch used over the window ending at `now`. */
  shares(now: number): { key: string; share: number }[] {
    return [...this.meters].map(([key, meter]) => ({ key, share: meter.share(now) }));
  }
}
