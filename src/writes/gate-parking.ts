import { AsyncLocalStorage } from 'node:async_hooks';
import { UnderstudyError } from '../errors.js';
import type { RateGate } from '../partners/rate-gate.js';

/**
 * A write gave up waiting for its key's write budget before anything was sent: the job goes back to the queue
 * (no attempt spent) so its worker slot serves another tenant meanwhile.
 */
export class GateParkedError extends UnderstudyError {
  constructor(
    readonly waitedMs: number,
    readonly retryInMs: number,
  ) {
    super('US_RATE_LIMITED', `write budget of the key exhausted: parked after waiting ${waitedMs} ms`);
  }
}

interface Parking {
  readonly afterMs: number;
  readonly retryInMs: number;
}

const parking = new AsyncLocalStorage<Parking>();

/**
 * Runs `fn` so that a write inside it that would wait longer than `afterMs` for its key's budget throws
 * `GateParkedError` instead (through gates wrapped with `parkableGate`). Waits of other calls are untouched.
 */
export const withParking = <T>(p: Parking, fn: () => Promise<T>): Promise<T> => parking.run(p, fn);

/**
 * Wraps a rate gate so that write acquisitions made under `withParking` stop waiting after the given time. The
 * request is not counted when it parks (the gate admits atomically or not at all), so nothing is lost.
 */
export function parkableGate(gate: RateGate): RateGate {
  return {
    async acquire(kind, opts) {
      const p = parking.getStore();
      if (!p || kind !== 'write') return gate.acquire(kind, opts);
      const park = new AbortController();
      const timer = setTimeout(() => park.abort(new GateParkedError(p.afterMs, p.retryInMs)), p.afterMs);
      try {
        return await gate.acquire(kind, { signal: AbortSignal.any([opts.signal, park.signal]) });
      } catch (err) {
        if (park.signal.aborted && !opts.signal.aborted) throw park.signal.reason;
        throw err;
      } finally {
        clearTimeout(timer);
      }
    },
    pause: (ms) => gate.pause(ms),
    close: () => gate.close(),
  };
}
