import { acquireOrPark } from './gate-parking.js';
import type { CallOptions, Prepaid, Reservation, Reserve, ReserveCounts } from './partners-client.js';
import type { RateGate, RequestKind } from './rate-gate.js';
import { type Dispatch, kindOf } from './upstream-call.js';

/** A wait at the gate shorter than this is not worth telling anyone about. */
const WAITING_AFTER_MS = 300;

/** Acquires the gate (or parks), telling `onWaiting` when the wait lasts more than a moment and when it ends. */
async function waitAtGate(gate: RateGate, kind: RequestKind, opts: CallOptions): Promise<void> {
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

/** Grants held for a sequence: spent one per request, the rest given back to the gate once. */
function prepaidGrants(gate: RateGate, held: Record<RequestKind, number>): Prepaid & { release(): void } {
  const giveBack = () => {
    for (const kind of ['read', 'write'] as const) {
      for (; held[kind] > 0; held[kind]--) gate.release(kind);
    }
  };
  return {
    take(kind) {
      if (held[kind] <= 0) return false;
      held[kind]--;
      return true;
    },
    forfeit: giveBack,
    release: giveBack,
  };
}

/**
 * Takes a sequence's requests at the key's gate before the first is sent (writes first, the scarcer budget, then
 * reads), each as a request waits: parking and `onWaiting` apply. A wait given up gives back what was taken.
 */
export function reserveAtGate(gate: RateGate): Reserve {
  return async (counts: ReserveCounts, opts: CallOptions): Promise<Reservation> => {
    const held: Record<RequestKind, number> = { read: 0, write: 0 };
    const grants = prepaidGrants(gate, held);
    const take = async (more: ReserveCounts) => {
      for (const kind of ['write', 'read'] as const) {
        for (let i = 0; i < (more[kind] ?? 0); i++) {
          await waitAtGate(gate, kind, opts);
          held[kind]++;
        }
      }
    };
    try {
      await take(counts);
    } catch (err) {
      grants.release();
      throw err;
    }
    return { call: { ...opts, prepaid: grants }, extend: take, release: grants.release };
  };
}

/**
 * The rate gate of the key: every attempt acquires `read` (GET) or `write` first, parking when the call's
 * `parking` says so, and settles once the answer's headers (or a failure) are here, a bound on when the upstream
 * counted it. A request carrying a reservation's grant of its kind (`opts.prepaid`) spends it instead of waiting.
 * A 429's key-wide pause is the retry layer's to ask (`gate.pause`).
 */
export function throughGate(gate: RateGate): <R>(next: Dispatch<R>) => Dispatch<R> {
  return (next) => async (call, opts) => {
    const kind = kindOf(call);
    if (!opts.prepaid?.take(kind)) await waitAtGate(gate, kind, opts);
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
