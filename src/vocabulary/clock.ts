/**
 * Where a part reads the time: the real clock in a process, a clock a test moves by hand. Lease expiry and renewal
 * are reckoned by it (the times it gives are compared in SQL), so a test advances it instead of sleeping.
 */
export interface Clock {
  /** Milliseconds since the epoch, as `Date.now()`. */
  now(): number;
}

/** The real clock. */
export const systemClock: Clock = { now: () => Date.now() };
