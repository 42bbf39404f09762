import type { ScheduleClock, Ticker, Timer } from '../../src/sync/schedule-clock.js';
import type { ManualClock } from './manual-clock.js';

/** A schedule clock a test moves: timers fire as `advance` passes their times, never by themselves. */
export interface SteppedClock extends ScheduleClock {
  /**
   * Moves time on by `ms`, firing each timer due on the way in time order; each fire's work (what it returns) ends,
   * and what it set off settles, before time moves on to the next.
   */
  advance(ms: number): Promise<void>;
}

interface Pending {
  at: number;
  readonly seq: number;
  readonly fire: () => unknown;
  readonly every?: number;
  cancelled: boolean;
}

/** Lets the promise jobs and I/O callbacks under way run (no time passes on `base`). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A schedule clock over `base` (whose time a store may read too): its timers fire only as `advance` passes them. */
export function steppedClock(base: ManualClock): SteppedClock {
  const pending: Pending[] = [];
  let seq = 0;
  const add = (ms: number, fire: () => unknown, every?: number): Pending => {
    const p: Pending = {
      at: base.now() + Math.max(0, ms),
      seq: seq++,
      fire,
      cancelled: false,
      ...(every && { every }),
    };
    pending.push(p);
    return p;
  };
  const next = (until: number) =>
    pending.filter((p) => !p.cancelled && p.at <= until).sort((x, y) => x.at - y.at || x.seq - y.seq)[0];
  return {
    now: () => base.now(),
    cron: () => Promise.reject(new Error('the stepped clock has no cron')),
    every(ms, fire): Ticker {
      const p = add(ms, fire, ms);
      const stop = async () => {
        p.cancelled = true;
      };
      return { next: () => p.at, stop };
    },
    after(ms, fire): Timer {
      const p = add(ms, fire);
      const cancel = () => {
        p.cancelled = true;
      };
      return { cancel };
    },
    async advance(ms) {
      const until = base.now() + ms;
      for (;;) {
        await settle();
        const due = next(until);
        if (!due) break;
        base.advance(due.at - base.now());
        if (due.every) due.at += due.every;
        else due.cancelled = true;
        await due.fire();
      }
      base.advance(until - base.now());
    },
  };
}
