import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { createLogger } from '../../src/log.js';
import { startPeriodic } from '../../src/queue/periodic-tasks.js';
import { startQueueWorker, type WorkerStops } from '../../src/queue/queue-worker.js';
import type { ScheduleClock } from '../../src/sync/schedule-clock.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';

/** Intervals the test fires by moving time on (`advance`), in time order; `live` counts those not stopped. */
function movedClock() {
  let now = 0;
  const intervals: { at: number; ms: number; fire: () => void; stopped: boolean }[] = [];
  const clock: Pick<ScheduleClock, 'every'> = {
    every: (ms, fire) => {
      const t = { at: now + ms, ms, fire, stopped: false };
      intervals.push(t);
      return {
        next: () => t.at,
        stop: async () => {
          t.stopped = true;
        },
      };
    },
  };
  /** Fires what falls due on the way, letting each run's promise settle before the next tick. */
  const advance = async (ms: number) => {
    const until = now + ms;
    const next = () => intervals.filter((t) => !t.stopped && t.at <= until).sort((a, b) => a.at - b.at)[0];
    for (let due = next(); due; due = next()) {
      now = due.at;
      due.at += due.ms;
      due.fire();
      await new Promise(setImmediate);
    }
    now = until;
  };
  return { clock, advance, live: () => intervals.filter((t) => !t.stopped).length };
}

describe('periodic tasks on the clock', () => {
  it('run at start when asked, then each interval; a first delay comes once; none after stop', async () => {
    const t = movedClock();
    const runs: string[] = [];
    const tasks = startPeriodic(t.clock, [
      { everyMs: 100, atStart: true, run: async () => void runs.push('sweep') },
      { everyMs: 1000, firstAfterMs: 250, run: async () => void runs.push('prune') },
    ]);
    expect(runs).toEqual(['sweep']);
    await new Promise(setImmediate); // the run at start ends
    await t.advance(300);
    expect(runs.filter((r) => r === 'sweep')).toHaveLength(4);
    expect(runs.filter((r) => r === 'prune')).toHaveLength(1);
    await t.advance(1000);
    expect(runs.filter((r) => r === 'prune')).toHaveLength(2);
    await tasks.stop();
    expect(t.live()).toBe(0);
    const before = runs.length;
    await t.advance(5000);
    expect(runs).toHaveLength(before);
  });

  it('does not start a run while the last one goes on, and stop waits for it', async () => {
    const t = movedClock();
    let started = 0;
    let finish = () => {};
    const tasks = startPeriodic(t.clock, [
      {
        everyMs: 10,
        run: () => {
          started++;
          return new Promise<void>((r) => {
            finish = r;
          });
        },
      },
    ]);
    await t.advance(50);
    expect(started).toBe(1);
    let stopped = false;
    const stopping = tasks.stop().then(() => {
      stopped = true;
    });
    await Promise.resolve();
    expect(stopped).toBe(false);
    finish();
    await stopping;
    expect(stopped).toBe(true);
  });
});

describe('one worker lifecycle (startQueueWorker)', () => {
  let server: TestRedis;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('tells its job of the close, cuts it after the grace, closes once, and stops its periodic work', async () => {
    const redis = new Redis(server.url, { maxRetriesPerRequest: null });
    onTestFinished(() => redis.disconnect());
    const prefix = `t-${randomUUID().slice(0, 8)}`;
    const name = `q-${randomUUID().slice(0, 8)}`;
    const queue = new Queue(name, { connection: redis, prefix });
    onTestFinished(() => queue.close());
    const t = movedClock();
    const seen: string[] = [];
    let polls = 0;
    const processStopping = new AbortController();
    const qw = startQueueWorker<{ n: number }>({
      queue: name,
      processor: (stops: WorkerStops) => async () => {
        seen.push('started');
        await new Promise<void>((resolve) => stops.closing.addEventListener('abort', () => resolve()));
        seen.push('closing');
        await new Promise<void>((resolve) => stops.hardStop.addEventListener('abort', () => resolve()));
        seen.push(`cut: ${(stops.hardStop.reason as Error).message}`);
        return 'handed back';
      },
      graceMs: 50,
      periodic: [{ everyMs: 1000, run: async () => void polls++ }],
      clock: t.clock,
      redis,
      prefix,
      log: createLogger({ level: 'silent' }),
      processStopping: processStopping.signal,
      concurrency: 1,
      lock: { lockDurationMs: 5000, maxStalledCount: 1 },
      errorWhat: 'test worker error',
      hardStopReason: new Error('too slow'),
    });
    await t.advance(2000);
    expect(polls).toBe(2);
    await queue.add('job', { n: 1 });
    await vi.waitFor(() => expect(seen).toEqual(['started']), { interval: 10 });
    expect(qw.worker.opts.stalledInterval).toBe(5000);
    const first = qw.close();
    expect(qw.close()).toBe(first);
    await first;
    expect(seen).toEqual(['started', 'closing', 'cut: too slow']);
    expect(qw.closing.aborted && qw.hardStop.aborted).toBe(true);
    expect(qw.worker.closing).toBeTruthy();
    await t.advance(5000);
    expect(polls).toBe(2);
  });
});
