/** Reads and writes are budgeted apart. */
export type RequestKind = 'read' | 'write';

export interface RateBudget {
  readonly reads: number;
  readonly writes: number;
  readonly windowMs: number;
}

export const DEFAULT_BUDGET: RateBudget = { reads: 100, writes: 20, windowMs: 60_000 };

/**
 * The per-API-key request budget. One gate guards one key; every process using the key must share it
 * (in memory for one process, in Redis for many). It never lets more than the budget through in any
 * rolling window and never busy-waits.
 *
 * The upstream counts a request when it arrives, which is some time after the gate granted it (event-loop and
 * scheduling delay, connection setup, the network). So a granted request counts as in flight until `settle`,
 * and from then on as sent at the moment it was settled: a moment after the upstream counted it, whatever the
 * delay. A request never settled counts as in flight for one window after its grant, then as sent then.
 */
export interface RateGate {
  /** Resolves when one request of `kind` may be sent now, having counted it; returns the milliseconds waited. */
  acquire(kind: RequestKind, opts: { readonly signal: AbortSignal }): Promise<number>;
  /**
   * Says that one request of `kind` granted earlier got its answer (or failed): it counts as sent now. Call it
   * once per grant, as soon as the response headers (or the error) arrive; it never throws.
   */
  settle(kind: RequestKind): void;
  /**
   * Gives back one request of `kind` granted earlier and never sent (a reservation not spent): it stops counting at
   * once, as if never granted. Call it at most once per grant, instead of `settle`; it never throws.
   */
  release(kind: RequestKind): void;
  /** Holds every request of this key (both kinds) until `ms` from now, e.g. after a 429's Retry-After. */
  pause(ms: number): Promise<void>;
  /** Releases timers and connections. */
  close(): Promise<void>;
}
