import type { Clock } from '../../src/vocabulary/clock.js';

/** A clock that stands still until a test moves it: leases expire when the test says, never while it sleeps. */
export interface ManualClock extends Clock {
  /** Moves the clock `ms` forward. */
  advance(ms: number): void;
}

/** A clock starting at `start` (default the real time now), moved only by `advance`. */
export function manualClock(start = Date.now()): ManualClock {
  let t = start;
  return {
    now: () => t,
    advance(ms) {
      t += ms;
    },
  };
}
