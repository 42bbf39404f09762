import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { UnderstudyError } from '../../src/errors.js';
import { keyHash } from '../../src/partners/key-hash.js';
import { createMemoryRateGate } from '../../src/partners/memory-rate-gate.js';

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

const open = () => ({ signal: new AbortController().signal });

describe('memory rate gate', () => {
  it('never lets more than the budget through in any rolling window', async () => {
    const gate = createMemoryRateGate({ reads: 3, writes: 1, windowMs: 1000 }, { now: () => Date.now() });
    const granted: number[] = [];
    const all: Promise<number>[] = [];
    // Bursts at uneven times, so a fixed-bucket limiter would let 6 through around a bucket edge.
    for (const at of [0, 0, 700, 900, 900, 950, 1500, 1500, 1500, 2600]) {
      await vi.advanceTimersByTimeAsync(at - (Date.now() - 1_000_000));
      all.push(
        gate.acquire('read', open()).then((w) => {
          granted.push(Date.now());
          return w;
        }),
      );
    }
    await vi.runAllTimersAsync();
    await Promise.all(all);
    expect(granted).toHaveLength(10);
    for (const t of granted) {
      expect(granted.filter((u) => u > t - 1000 && u <= t).length).toBeLessThanOrEqual(3);
    }
    // Slots free exactly one window after the sends they replace.
    expect(granted.map((t) => t - 1_000_000)).toEqual([0, 0, 700, 1000, 1000, 1700, 2000, 2000, 2700, 3000]);
    await gate.close();
  });

  it('serves waiters first in, first out with a single timer', async () => {
    const gate = createMemoryRateGate({ reads: 1, writes: 1, windowMs: 100 }, { now: () => Date.now() });
    const order: number[] = [];
    await gate.acquire('read', open());
    const waits = [1, 2, 3, 4, 5].map((n) => gate.acquire('read', open()).then(() => order.push(n)));
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(250);
    expect(order).toEqual([1, 2]);
    await vi.runAllTimersAsync();
    await Promise.all(waits);
    expect(order).toEqual([1, 2, 3, 4, 5]);
  });

  it('budgets reads and writes apart and reports the time waited', async () => {
    const gate = createMemoryRateGate({ reads: 2, writes: 1, windowMs: 1000 }, { now: () => Date.now() });
    expect(await gate.acquire('write', open())).toBe(0);
    expect(await gate.acquire('read', open())).toBe(0);
    expect(await gate.acquire('read', open())).toBe(0);
    const write = gate.acquire('write', open());
    await vi.advanceTimersByTimeAsync(1000);
    expect(await write).toBe(1000);
  });

  it('rejects an aborted waiter with US_ABORTED and hands its slot to the next', async () => {
    const gate = createMemoryRateGate({ reads: 1, writes: 1, windowMs: 100 }, { now: () => Date.now() });
    await gate.acquire('read', open());
    const ac = new AbortController();
    const first = gate.acquire('read', { signal: ac.signal });
    const second = gate.acquire('read', open());
    ac.abort();
    await expect(first).rejects.toMatchObject({ code: 'US_ABORTED' });
    await vi.advanceTimersByTimeAsync(100);
    expect(await second).toBe(100);
    const already = AbortSignal.abort();
    await expect(gate.acquire('write', { signal: already })).rejects.toBeInstanceOf(UnderstudyError);
  });

  it('holds both kinds during a pause', async () => {
    const gate = createMemoryRateGate({ reads: 10, writes: 10, windowMs: 1000 }, { now: () => Date.now() });
    await gate.pause(500);
    const read = gate.acquire('read', open());
    const write = gate.acquire('write', open());
    let done = 0;
    void Promise.all([read, write]).then(() => done++); // observed below; rejections would fail the awaits
    await vi.advanceTimersByTimeAsync(499);
    expect(done).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(await read).toBe(500);
    expect(await write).toBe(500);
  });

  it('rejects pending waiters on close and refuses new ones', async () => {
    const gate = createMemoryRateGate({ reads: 1, writes: 1, windowMs: 1000 }, { now: () => Date.now() });
    await gate.acquire('read', open());
    const waiting = gate.acquire('read', open());
    await gate.close();
    await expect(waiting).rejects.toMatchObject({ code: 'US_ABORTED' });
    await expect(gate.acquire('write', open())).rejects.toMatchObject({ code: 'US_ABORTED' });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('checks the budget up front', () => {
    expect(() => createMemoryRateGate({ reads: 0, writes: 1, windowMs: 1 })).toThrow(/budget.reads/);
  });
});

describe('keyHash', () => {
  it('is the first 16 hex chars of sha256 and never the key', () => {
    // sha256('abc') = ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
    expect(keyHash('abc')).toBe('ba7816bf8f01cfea');
    expect(keyHash('sk_live_x')).toMatch(/^[0-9a-f]{16}$/);
  });
});
