import { describe, expect, it } from 'vitest';
import { runSchedules, type Schedule } from '../../src/sync/run-schedules.js';
import type { ScheduleClock, Ticker } from '../../src/sync/schedule-clock.js';

/** A clock the test moves: intervals fire as `advance` passes their times; cron ticks fire when the test says. */
function testClock(start = Date.parse('2026-03-01T10:00:00Z')) {
  let now = start;
  const intervals: { at: number; ms: number; fire: () => void; stopped: boolean }[] = [];
  const crons = new Map<string, { fire: () => void; stopped: boolean }>();
  const clock: ScheduleClock = {
    now: () => now,
    cron: async (expression, _zone, fire) => {
      const c = { fire, stopped: false };
      crons.set(expression, c);
      const stop = async () => {
        c.stopped = true;
      };
      return { next: () => null, stop } satisfies Ticker;
    },
    every: (ms, fire) => {
      const t = { at: now + ms, ms, fire, stopped: false };
      intervals.push(t);
      const stop = async () => {
        t.stopped = true;
      };
      return { next: () => t.at, stop };
    },
    after: () => {
      throw new Error('runSchedules sets no single timer');
    },
  };
  return {
    clock,
    /** Moves time on by `ms`, firing every interval due on the way, in time order. */
    advance(ms: number) {
      const until = now + ms;
      for (;;) {
        const due = intervals.filter((t) => !t.stopped && t.at <= until).sort((a, b) => a.at - b.at)[0];
        if (!due) break;
        now = due.at;
        due.at += due.ms;
        due.fire();
      }
      now = until;
    },
    tick: (expression: string) => crons.get(expression)?.fire(),
    live: () => intervals.filter((t) => !t.stopped).length + [...crons.values()].filter((c) => !c.stopped).length,
  };
}

/** A run the test ends when it wants: `started` lists the jobs begun, `finish()` ends the oldest running. */
function heldRuns() {
  const started: string[] = [];
  const ends: (() => void)[] = [];
  let running = 0;
  let most = 0;
  return {
    started,
    most: () => most,
    run: async (job: string) => {
      started.push(job);
      running++;
      most = Math.max(most, running);
      await new Promise<void>((resolve) => ends.push(resolve));
      running--;
    },
    finish: async () => {
      ends.shift()?.();
      await new Promise((r) => setImmediate(r));
    },
  };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('runSchedules', () => {
  it('runs an interval schedule at once and every N ms after, on the clock it is given', async () => {
    const t = testClock();
    const runs = heldRuns();
    const stop = new AbortController();
    const every: Schedule<string> = { key: 'inc', job: 'inc', timing: { everyMs: 60_000, firstNow: true } };
    const done = runSchedules([every], stop.signal, { clock: t.clock, run: runs.run });
    await settle();
    expect(runs.started).toEqual(['inc']);
    await runs.finish();
    t.advance(59_999);
    await settle();
    expect(runs.started).toEqual(['inc']);
    t.advance(1);
    await settle();
    expect(runs.started).toEqual(['inc', 'inc']);
    await runs.finish();
    stop.abort();
    await done;
    expect(t.live()).toBe(0);
  });

  it('never runs two at once: one due during another waits its turn; one already waiting or running is skipped', async () => {
    const t = testClock();
    const runs = heldRuns();
    const skipped: string[] = [];
    const stop = new AbortController();
    const done = runSchedules(
      [
        { key: 'inc', job: 'inc', timing: { everyMs: 60_000, firstNow: true } },
        { key: 'full', job: 'full', timing: { cron: '0 3 * * *', timezone: 'Europe/London' } },
      ],
      stop.signal,
      { clock: t.clock, run: runs.run, onSkip: (job) => skipped.push(job) },
    );
    await settle();
    expect(runs.started).toEqual(['inc']);
    t.tick('0 3 * * *'); // due while inc runs: waits
    t.tick('0 3 * * *'); // already waiting: skipped
    t.advance(60_000); // inc due while inc runs: skipped
    await settle();
    expect(skipped).toEqual(['full', 'inc']);
    await runs.finish();
    expect(runs.started).toEqual(['inc', 'full']);
    t.advance(60_000); // inc due while full runs: waits
    await runs.finish();
    expect(runs.started).toEqual(['inc', 'full', 'inc']);
    await runs.finish();
    expect(runs.most()).toBe(1);
    stop.abort();
    await done;
  });

  it('tells what comes next when idle, carries on after a failed run with onError, and refuses a bad cron', async () => {
    const t = testClock();
    const stop = new AbortController();
    const idle: (number | null)[] = [];
    const errors: unknown[] = [];
    let n = 0;
    const done = runSchedules([{ key: 'inc', job: 'inc', timing: { everyMs: 60_000, firstNow: true } }], stop.signal, {
      clock: t.clock,
      run: async () => {
        n++;
        if (n === 1) throw new Error('upstream down');
      },
      onError: (err) => errors.push(err),
      onIdle: (next) => idle.push(next?.at ?? null),
    });
    await settle();
    expect(errors).toHaveLength(1);
    expect(idle.at(-1)).toBe(t.clock.now() + 60_000);
    t.advance(60_000);
    await settle();
    expect(n).toBe(2);
    stop.abort();
    await done;
    await expect(
      runSchedules([{ key: 'x', job: 'x', timing: { cron: 'not a cron' } }], stop.signal, { run: async () => {} }),
    ).rejects.toMatchObject({ code: 'US_USAGE' });
  });
});
