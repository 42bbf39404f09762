import { describe, expect, it, vi } from 'vitest';
import { runOnSchedule } from '../../src/sync/schedule-inline.js';

describe('runOnSchedule', () => {
  it('runs on each tick, never two at once, and returns once stopped and the run in flight ended', async () => {
    const stop = new AbortController();
    let running = 0;
    let maxRunning = 0;
    let runs = 0;
    let skipped = 0;
    let release!: () => void;
    const firstHeld = new Promise<void>((r) => {
      release = r;
    });
    const done = runOnSchedule(
      '* * * * * *',
      async () => {
        running++;
        runs++;
        maxRunning = Math.max(maxRunning, running);
        // The first run outlasts a few ticks; those ticks are skipped, not stacked.
        if (runs === 1) await firstHeld;
        running--;
      },
      stop.signal,
      { onSkip: () => skipped++ },
    );
    await vi.waitFor(() => expect(skipped).toBeGreaterThanOrEqual(1), { timeout: 10_000 });
    release();
    await vi.waitFor(() => expect(runs).toBeGreaterThanOrEqual(2), { timeout: 10_000 });
    stop.abort();
    await done;
    expect(maxRunning).toBe(1);
  });

  it('keeps going after a failing tick and refuses an invalid expression', async () => {
    const stop = new AbortController();
    const errors: unknown[] = [];
    let runs = 0;
    const done = runOnSchedule(
      '* * * * * *',
      async () => {
        runs++;
        if (runs === 1) throw new Error('upstream down');
      },
      stop.signal,
      { onError: (e) => errors.push(e) },
    );
    await vi.waitFor(() => expect(runs).toBeGreaterThanOrEqual(2), { timeout: 10_000 });
    stop.abort();
    await done;
    expect(errors).toHaveLength(1);
    await expect(runOnSchedule('not a cron', async () => {}, stop.signal)).rejects.toMatchObject({ code: 'US_USAGE' });
  });
});
