import { acquireOrPark } from './gate-parking.js';
import type { RateGate, RequestKind } from './rate-gate.js';
import { type AttemptOptions, type Dispatch, kindOf } from './upstream-call.js';

/** A wait at the gate shorter than this is not worth telling anyone about. */
const WAITING_AFTER_MS = 300;

/** Acquires the gate (or parks), telling `onWaiting` when the wait lasts more than a moment and when it ends. */
async function waitAtGate(gate: RateGate, kind: RequestKind, opts: AttemptOptions): Promise<void> {
  const { onWaiting, signal, parking } = opts;
  if (!onWaiting) {
    await acquireOrPark(gate, kind, signal, parking);
    return;
  }
  const since = Date.now();
  const told = setTimeout(() => onWaiting(kind, since), WAITING_AFTER_MS);
  try {
    await acquireOrPark(gate, kind, signal, parking);
  } finally {
    clearTimeout(told);
    onWaiting(kind, null);
  }
}

/**
 * The rate gate of the key: every attempt acquires `read` (GET) or `write` first, parking when the call's
 * `parking` says so, and settles once the answer's headers (or a failure) are here, a bound on when the upstream
 * counted it. A 429's key-wide pause is the retry layer's to ask (`gate.pause`).
 */
export function throughGate(gate: RateGate): <R>(next: Dispatch<R>) => Dispatch<R> {
  return (next) => async (call, opts) => {
    const kind = kindOf(call);
    await waitAtGate(gate, kind, opts);
    let settled = false;
    const onAnswered = () => {
      if (settled) return;
      settled = true;
      gate.settle(kind);
    };
    try {
      return await next(call, { ...opts, onAnswered });
    } finally {
      onAnswered();
    }
  };
}
