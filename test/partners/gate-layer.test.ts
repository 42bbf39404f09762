import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { reserveAtGate, throughGate } from '../../src/partners/gate-layer.js';
import { GateParkedError } from '../../src/partners/gate-parking.js';
import { createMemoryRateGate } from '../../src/partners/memory-rate-gate.js';
import type { RateGate, RequestKind } from '../../src/partners/rate-gate.js';
import type { AttemptOptions, UpstreamCall } from '../../src/partners/upstream-call.js';

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

const call = (method: UpstreamCall['method']): UpstreamCall => ({
  method,
  route: '/partners/{version}/{tenant}/series',
  path: '/partners/2026-02/acme/series',
  auth: true,
  shape: (json) => ({ ok: true, value: json }),
});
const open = (): AttemptOptions => ({ signal: new AbortController().signal });

/** A gate that grants at once and records what was asked of it. */
function recordingGate() {
  const log: string[] = [];
  const gate: RateGate = {
    acquire: async (kind) => {
      log.push(`acquire ${kind}`);
      return 0;
    },
    settle: (kind) => log.push(`settle ${kind}`),
    release: (kind) => log.push(`release ${kind}`),
    pause: async () => {},
    close: async () => {},
  };
  return { gate, log };
}

describe('gate layer', () => {
  it('acquires read for GET and write for the rest, and settles once, when the inner layer says it was answered', async () => {
    const { gate, log } = recordingGate();
    const inner = async (_c: UpstreamCall, opts: AttemptOptions) => {
      log.push('send');
      opts.onAnswered?.();
      log.push('body');
      opts.onAnswered?.();
      return 'answer';
    };
    expect(await throughGate(gate)(inner)(call('GET'), open())).toBe('answer');
    await throughGate(gate)(inner)(call('POST'), open());
    expect(log).toEqual([
      'acquire read',
      'send',
      'settle read',
      'body',
      'acquire write',
      'send',
      'settle write',
      'body',
    ]);
  });

  it('settles a grant whose inner layer never said so, even when it threw', async () => {
    const { gate, log } = recordingGate();
    const failing = async () => {
      throw new Error('boom');
    };
    await expect(throughGate(gate)(failing)(call('GET'), open())).rejects.toThrow('boom');
    expect(log).toEqual(['acquire read', 'settle read']);
  });

  it('tells onWaiting of a wait that lasts more than a moment, and of its end', async () => {
    const gate = createMemoryRateGate({ reads: 1, writes: 1, windowMs: 1000 });
    const told: [RequestKind, number | null][] = [];
    const opts = { ...open(), onWaiting: (kind: RequestKind, since: number | null) => told.push([kind, since]) };
    const send = throughGate(gate)(async () => 'answer');
    await send(call('GET'), opts);
    expect(told).toEqual([['read', null]]);
    const second = send(call('GET'), opts);
    await vi.advanceTimersByTimeAsync(300);
    expect(told.at(-1)).toEqual(['read', 1_000_000]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(await second).toBe('answer');
    expect(told.at(-1)).toEqual(['read', null]);
    await gate.close();
  });

  it("parks a call of its parking's kinds that waits afterMs, when worth it, and leaves other kinds waiting", async () => {
    const gate = createMemoryRateGate({ reads: 1, writes: 1, windowMs: 60_000 });
    const send = throughGate(gate)(async () => 'answer');
    const parking = { afterMs: 100, retryInMs: 500, kinds: ['read'] as const };
    await send(call('GET'), open());
    await send(call('POST'), open());
    const read = send(call('GET'), { ...open(), parking }).catch((err: unknown) => err);
    const write = send(call('POST'), { ...open(), parking });
    await vi.advanceTimersByTimeAsync(100);
    const parked = await read;
    expect(parked).toBeInstanceOf(GateParkedError);
    expect(parked).toMatchObject({ code: 'US_GATE_PARKED', waitedMs: 100, retryInMs: 500, kind: 'read' });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(await write).toBe('answer');
    await gate.close();
  });

  it('waits on while parking is not worth it, asking again every afterMs', async () => {
    const gate = createMemoryRateGate({ reads: 1, writes: 1, windowMs: 1000 });
    const send = throughGate(gate)(async () => 'answer');
    let asked = 0;
    const worthIt = async () => {
      asked++;
      return false;
    };
    const parking = { afterMs: 100, retryInMs: 500, worthIt };
    await send(call('DELETE'), open());
    const write = send(call('DELETE'), { ...open(), parking });
    await vi.advanceTimersByTimeAsync(1000);
    expect(await write).toBe('answer');
    expect(asked).toBeGreaterThanOrEqual(9);
    await gate.close();
  });
});

describe('a reservation at the gate', () => {
  it('takes the whole budget of a sequence first, then lets its requests leave without waiting', async () => {
    const gate = createMemoryRateGate({ reads: 10, writes: 2, windowMs: 60_000 });
    const send = throughGate(gate)(async () => 'answer');
    // Another caller holds the write budget for a while: the reservation waits for both writes before it resolves.
    await send(call('PUT'), open());
    await send(call('PUT'), open());
    let reserved = false;
    const pending = reserveAtGate(gate)({ write: 2, read: 1 }, open()).then((r) => {
      reserved = true;
      return r;
    });
    await vi.advanceTimersByTimeAsync(59_000);
    expect(reserved).toBe(false);
    await vi.advanceTimersByTimeAsync(1_001);
    const r = await pending;
    // With the budget taken, each request of the sequence leaves at once: no wait at the gate in between.
    const sent: number[] = [];
    const timed = throughGate(gate)(async () => {
      sent.push(Date.now());
      return 'answer';
    });
    await timed(call('GET'), r.call);
    await timed(call('PUT'), r.call);
    await timed(call('PATCH'), r.call);
    expect(sent).toEqual([sent[0], sent[0], sent[0]]);
    // A third write is not prepaid: it waits a window like any other.
    let third = false;
    const extra = timed(call('PUT'), r.call).then(() => {
      third = true;
    });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(third).toBe(false);
    r.release();
    await vi.advanceTimersByTimeAsync(60_000);
    await extra;
    await gate.close();
  });

  it('gives back the grants a sequence did not spend, so they never count against the key', async () => {
    const gate = createMemoryRateGate({ reads: 10, writes: 2, windowMs: 60_000 });
    const r = await reserveAtGate(gate)({ write: 2 }, open());
    const send = throughGate(gate)(async () => 'answer');
    await send(call('PUT'), r.call);
    r.release();
    r.release();
    // One write was spent; the other went back: a write from anyone else leaves at once.
    let other = false;
    const next = send(call('PUT'), open()).then(() => {
      other = true;
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(other).toBe(true);
    await next;
    await gate.close();
  });

  it('gives back what it took when its wait is given up', async () => {
    const { gate, log } = recordingGate();
    const stop = new AbortController();
    let n = 0;
    const stopping: RateGate = {
      ...gate,
      acquire: async (kind, o) => {
        if (++n === 2) {
          stop.abort();
          throw new Error('aborted');
        }
        return gate.acquire(kind, o);
      },
    };
    await expect(reserveAtGate(stopping)({ write: 2 }, { signal: stop.signal })).rejects.toThrow('aborted');
    expect(log).toEqual(['acquire write', 'release write']);
  });
});
