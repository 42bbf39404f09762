import cron from 'node-cron';
import type { Clock } from '../vocabulary/clock.js';

/** A running source of ticks: when it fires next, and how to stop it. */
export interface Ticker {
  /** The time (ms since the epoch) it fires next; null when it knows of none. */
  next(): number | null;
  /** Stops it: it fires no more. */
  stop(): Promise<void>;
}

/**
 * Where a schedule's time comes from: the wall clock (node-cron and timers, `wallClock`) in a process, a clock a
 * test advances in a test. `runSchedules` reads time only through it.
 */
export interface ScheduleClock extends Clock {
  /** Fires on each tick of a cron expression (node-cron's: 5 fields, or 6 with seconds), read in `timezone`. */
  cron(expression: string, timezone: string | undefined, fire: () => void): Promise<Ticker>;
  /** Fires every `ms`, the first `ms` from now, without drift (each tick is due `ms` after the previous one's). */
  every(ms: number, fire: () => void): Ticker;
  /**
   * Fires once, `ms` from now, unless cancelled first. What `fire` returns is the work it started: the wall clock
   * ignores it; a test's clock may wait for it before it moves on.
   */
  after(ms: number, fire: () => unknown): Timer;
}

/** A timer set to fire once: `cancel` stops it if it has not fired yet. */
export interface Timer {
  cancel(): void;
}

function afterOnTimers(ms: number, fire: () => unknown): Timer {
  const handle = setTimeout(() => void fire(), Math.max(0, Math.round(ms)));
  return { cancel: () => clearTimeout(handle) };
}

function everyOnTimers(ms: number, fire: () => void): Ticker {
  let nextAt = Date.now() + ms;
  let handle: NodeJS.Timeout | null = null;
  const arm = () => {
    handle = setTimeout(
      () => {
        nextAt += ms;
        fire();
        arm();
      },
      Math.max(0, nextAt - Date.now()),
    );
  };
  arm();
  return {
    next: () => nextAt,
    stop: async () => {
      if (handle) clearTimeout(handle);
    },
  };
}

async function cronTask(expression: string, timezone: string | undefined, fire: () => void): Promise<Ticker> {
  const task = cron.createTask(expression, () => fire(), timezone ? { timezone } : {});
  await task.start();
  return {
    next: () => task.getNextRun()?.getTime() ?? null,
    stop: async () => {
      await task.stop();
      await task.destroy();
    },
  };
}

/** The wall clock: node-cron for cron expressions, timers for intervals and single delays. */
export const wallClock: ScheduleClock = {
  now: () => Date.now(),
  cron: cronTask,
  every: everyOnTimers,
  after: afterOnTimers,
};
