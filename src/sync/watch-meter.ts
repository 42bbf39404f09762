/**
 * What watch has spent of one key's read budget: the times of its requests (probes, and the passes and searches
 * they start) over the last window. Watch asks it before each probe, so its share of the key stays within
 * `maxShare` however busy the collections are; the key's rate gate (shared in Redis) still guards the whole key.
 */
export class WatchMeter {
  private readonly sent: number[] = [];
  /** The most requests of watch the key's window may hold. */
  readonly cap: number;

  constructor(
    readonly readsPerWindow: number,
    readonly windowMs: number,
    maxShare: number,
  ) {
    this.cap = Math.max(1, Math.floor(readsPerWindow * maxShare));
  }

  private prune(now: number): void {
    let drop = 0;
    while (drop < this.sent.length && (this.sent[drop] as number) <= now - this.windowMs) drop++;
    if (drop > 0) this.sent.splice(0, drop);
  }

  /** Counts one request sent at `now`. */
  count(now: number): void {
    this.sent.push(now);
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
    const used = this.used(now);
    const over = used + need - this.cap;
    if (over <= 0) return 0;
    const leaving = this.sent[Math.min(this.sent.length - 1, over - 1)];
    return leaving === undefined ? this.windowMs : Math.max(1, leaving + this.windowMs - now);
  }
}
