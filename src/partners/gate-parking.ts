import { AsyncLocalStorage } from 'node:async_hooks';
import { UnderstudyError } from '../errors.js';
import type { RateGate, RequestKind } from './rate-gate.js';

/**
 * A job gave up waiting for its key's budget before anything was sent: it goes back to the queue (no attempt
 * spent) so its worker slot serves another tenant meanwhile. Its code is `US_ABORTED`, a wait given up, so the sync
 * core handles it as it handles a stop (committed pages stay, no error recorded, rethrown to the job).
 */
export class GateParkedError extends UnderstudyError {
  constructor(
    readonly waitedMs: number,
    readonly retryInMs: number,
    readonly kind: RequestKind = 'write',
  ) {
    super('US_ABORTED', `${kind} budget of the key exhausted: parked after waiting ${waitedMs} ms`);
  }
}

/** The `GateParkedError` behind `err` (itself or a cause), if any. */
export function parkedBy(err: unknown): GateParkedError | null {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof GateParkedError) return e;
  }
  return null;
}

export interface Parking {
  /** How long a write may wait for its key's budget before parking is considered. */
  readonly afterMs: number;
  /** How long a parked write stays out of the queue. */
  readonly retryInMs: number;
  /** Whether parking would help, e.g. other tenants' writes wait for a slot; asked every `afterMs` of waiting. */
  readonly worthIt?: () => Promise<boolean>;
  /** The kinds of request that park (default writes only: a sync job parks its reads). */
  readonly kinds?: readonly RequestKind[];
}

const parking = new AsyncLocalStorage<Parking>();

/**
 * Runs `fn` so that a request inside it (of `p.kinds`) that has waited `afterMs` for its key's budget, when parking is `worthIt`,
 * throws `GateParkedError` instead (through gates wrapped with `parkableGate`). Waits of other calls are untouched.
 */
export const withParking = <T>(p: Parking, fn: () => Promise<T>): Promise<T> => parking.run(p, fn);

/**
 * Wraps a rate gate so that acquisitions made under `withParking` stop waiting after the given time. The
 * request is not counted when it parks (the gate admits atomically or not at all), so nothing is lost.
 */
export function parkableGate(gate: RateGate): RateGate {
  return {
    async acquire(kind, opts) {
      const p = parking.getStore();
      if (!p || !(p.kinds ?? ['write']).includes(kind)) return gate.acquire(kind, opts);
      const park = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      let waited = 0;
      const arm = () => {
        timer = setTimeout(() => {
          waited += p.afterMs;
          const decide = p.worthIt ? p.worthIt() : Promise.resolve(true);
          decide.then(
            (yes) => {
              if (yes) park.abort(new GateParkedError(waited, p.retryInMs, kind));
              else if (!park.signal.aborted && timer !== undefined) arm();
            },
            () => {
              if (timer !== undefined) arm();
            },
          );
        }, p.afterMs);
      };
      arm();
      try {
        return await gate.acquire(kind, { signal: AbortSignal.any([opts.signal, park.signal]) });
      } catch (err) {
        if (park.signal.aborted && !opts.signal.aborted) throw park.signal.reason;
        throw err;
      } finally {
        clearTimeout(timer);
        timer = undefined;
      }
    },
    settle: (kind) => gate.settle(kind),
    pause: (ms) => gate.pause(ms),
    close: () => gate.close(),
  };
}
