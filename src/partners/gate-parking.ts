import { hasCode, UnderstudyError } from '../errors.js';
import { type PartnersClient, withCallOptions } from './partners-client.js';
import type { RateGate, RequestKind } from './rate-gate.js';

/**
 * A job gave up waiting for its key's budget before anything was sent: it goes back to the queue (no attempt
 * spent) so its worker slot serves another tenant meanwhile. Its code is `US_GATE_PARKED`, a stop (`isStop`), so
 * the sync core handles it as it handles a shutdown (committed pages stay, no error recorded, rethrown to the job).
 */
export class GateParkedError extends UnderstudyError {
  constructor(
    readonly waitedMs: number,
    readonly retryInMs: number,
    readonly kind: RequestKind = 'write',
  ) {
    super('US_GATE_PARKED', `${kind} budget of the key exhausted: parked after waiting ${waitedMs} ms`);
  }
}

/** Whether `err` is a parked wait (`US_GATE_PARKED`: only `GateParkedError` carries it). */
export const isGateParked = (err: unknown): err is GateParkedError => hasCode(err, 'US_GATE_PARKED');

/** The `GateParkedError` behind `err` (itself or a cause), if any. */
export function parkedBy(err: unknown): GateParkedError | null {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (isGateParked(e)) return e;
  }
  return null;
}

/** When a request stops waiting at its key's gate: a call option (`CallOptions.parking`) of the job that makes it. */
export interface Parking {
  /** How long a request may wait for its key's budget before parking is considered. */
  readonly afterMs: number;
  /** How long a parked job stays out of the queue. */
  readonly retryInMs: number;
  /** Whether parking would help, e.g. other tenants' jobs wait for a slot; asked every `afterMs` of waiting. */
  readonly worthIt?: () => Promise<boolean>;
  /** The kinds of request that park (default writes only: a sync job parks its reads). */
  readonly kinds?: readonly RequestKind[];
}

/**
 * Every `afterMs` of waiting, asks whether parking is worth it and, once it is, aborts `park` with a
 * `GateParkedError`. `stop` ends the watch (the wait is over either way).
 */
function watchWait(p: Parking, kind: RequestKind, park: AbortController): { stop(): void } {
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
  return {
    stop() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

/**
 * Acquires `gate` for one request of `kind`; under a `parking` of that kind, a wait that lasts `afterMs` while
 * parking is `worthIt` throws `GateParkedError` instead. The request is not counted when it parks (the gate admits
 * atomically or not at all), so nothing is lost.
 */
export async function acquireOrPark(
  gate: RateGate,
  kind: RequestKind,
  signal: AbortSignal,
  parking: Parking | undefined,
): Promise<number> {
  if (!parking || !(parking.kinds ?? ['write']).includes(kind)) return gate.acquire(kind, { signal });
  const park = new AbortController();
  const watch = watchWait(parking, kind, park);
  try {
    return await gate.acquire(kind, { signal: AbortSignal.any([signal, park.signal]) });
  } catch (err) {
    if (park.signal.aborted && !signal.aborted) throw park.signal.reason;
    throw err;
  } finally {
    watch.stop();
  }
}

/**
 * The tenant's client as one job sees it: every request it makes carries the job's `parking` (the shared client
 * and the other jobs' requests are untouched).
 */
export function parkingClient(client: PartnersClient, parking: Parking): PartnersClient {
  return withCallOptions(client, (opts) => ({ ...opts, parking }));
}
