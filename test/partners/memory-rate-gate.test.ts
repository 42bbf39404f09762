import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { UnderstudyError } from '../../src/errors.js';
import { keyHash } from '../../src/partners/key-hash.js';
import { createMemoryRateGate } from '../../src/partners/memory-rate-gate.js';
import type { RateGate, RequestKind } from '../../src/partners/rate-gate.js';

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

const open = () => ({ signal: new AbortController().signal });

/** Acquires and settles at once, as a request answered in no time would. */
const take = async (gate: RateGate, kind: RequestKind, opts = open()): Promise<number> => {
  const waited = await gate.acquire(kind, opts);
  gate.settle(kind);
  return waited;
};

describe('memory rate gate', () => {
  it('never lets more than the budget through in any rolling window', async () => {
    const gate = createMemoryRateGate({ reads: 3, writes: 1, windowMs: 1000 }, { now: () => Date.now() });
    const granted: number[] = [];
    const all: Promise<number>[] = [];
    // Bursts at uneven times, so a fixed-bucket limiter would let 6 through around a bucket edge.
    for (const at of [0, 0, 700, 900, 900, 950, 1500, 1500, 1500, 2600]) {
      await vi.advanceTimersByTimeAsync(at - (Date.now() - 1_000_000));
      all.push(
        take(gate, 'read').then((w) => {
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
    await take(gate, 'read');
    const waits = [1, 2, 3, 4, 5].map((n) => take(gate, 'read').then(() => order.push(n)));
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(250);
    expect(order).toEqual([1, 2]);
    await vi.runAllTimersAsync();
    await Promise.all(waits);
    expect(order).toEqual([1, 2, 3, 4, 5]);
  });

  it('budgets reads and writes apart and reports the time waited', async () => {
    const gate = createMemoryRateGate({ reads: 2, writes: 1, windowMs: 1000 }, { now: () => Date.now() });
    expect(await take(gate, 'write')).toBe(0);
    expect(await take(gate, 'read')).toBe(0);
    expect(await take(gate, 'read')).toBe(0);
    const write = take(gate, 'write');
    await vi.advanceTimersByTimeAsync(1000);
    expect(await write).toBe(1000);
  });

  it('rejects an aborted waiter with US_ABORTED and hands its slot to the next', async () => {
    const gate = createMemoryRateGate({ reads: 1, writes: 1, windowMs: 100 }, { now: () => Date.now() });
    await take(gate, 'read');
    const ac = new AbortController();
    const first = take(gate, 'read', { signal: ac.signal });
    const second = take(gate, 'read');
    ac.abort();
    await expect(first).rejects.toMatchObject({ code: 'US_ABORTED' });
    await vi.advanceTimersByTimeAsync(100);
    expect(await second).toBe(100);
    const already = AbortSignal.abort();
    await expect(take(gate, 'write', { signal: already })).rejects.toBeInstanceOf(UnderstudyError);
  });

  it('holds both kinds during a pause', async () => {
    const gate = createMemoryRateGate({ reads: 10, writes: 10, windowMs: 1000 }, { now: () => Date.now() });
    await gate.pause(500);
    const read = take(gate, 'read');
    const write = take(gate, 'write');
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
    await take(gate, 'read');
    const waiting = take(gate, 'read');
    await gate.close();
    await expect(waiting).rejects.toMatchObject({ code: 'US_ABORTED' });
    await expect(take(gate, 'write')).rejects.toMatchObject({ code: 'US_ABORTED' });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('frees a slot one window after the answer, not after the grant, however late the request left', async () => {
    // The upstream counts a request when it arrives; the answer is the latest moment that can be.
    const gate = createMemoryRateGate({ reads: 2, writes: 1, windowMs: 1000 }, { now: () => Date.now() });
    await gate.acquire('read', open());
    await gate.acquire('read', open());
    await vi.advanceTimersByTimeAsync(300); // scheduling delay and the request's round trip
    gate.settle('read');
    gate.settle('read');
    let granted = 0;
    const third = gate.acquire('read', open()).then(() => {
      granted = Date.now() - 1_000_000;
    });
    await vi.advanceTimersByTimeAsync(999);
    expect(granted).toBe(0); // past one window after the grants, but the upstream may still count both
    await vi.advanceTimersByTimeAsync(1);
    await third;
    expect(granted).toBe(1300);
  });

  it('counts a request in flight until it is settled, and at most one window past its grant', async () => {
    const gate = createMemoryRateGate({ reads: 1, writes: 1, windowMs: 1000 }, { now: () => Date.now() });
    await gate.acquire('read', open());
    let granted = 0;
    const second = gate.acquire('read', open()).then(() => {
      granted = Date.now() - 1_000_000;
    });
    await vi.advanceTimersByTimeAsync(1800);
    expect(granted).toBe(0);
    gate.settle('read');
    await vi.advanceTimersByTimeAsync(1000);
    await second;
    expect(granted).toBe(2800);
    // Never settled: the lease (one window) ends, then it counts as sent then.
    let third = 0;
    const late = gate.acquire('read', open()).then(() => {
      third = Date.now() - 1_000_000;
    });
    await vi.runAllTimersAsync();
    await late;
    expect(third).toBe(2800 + 2000);
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
