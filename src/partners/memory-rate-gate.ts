import { UnderstudyError } from '../errors.js';
import type { RateBudget, RateGate, RequestKind } from './rate-gate.js';

export interface MemoryRateGateOptions {
  /** Clock in milliseconds; default `Date.now`. Timers are scheduled from its readings. */
  readonly now?: () => number;
}

interface Waiter {
  readonly kind: RequestKind;
  readonly since: number;
  readonly resolve: (waitedMs: number) => void;
  readonly reject: (err: unknown) => void;
  readonly detach: () => void;
}

// setTimeout overflows past 2^31-1 ms and fires at once; longer waits are re-armed when they fire.
const MAX_TIMER_MS = 2_147_483_647;

const aborted = (reason: string) => new UnderstudyError('US_ABORTED', `rate gate: ${reason}`);

/**
 * A rate gate for one process: a log of send times per kind, so no window of `windowMs` ever holds more
 * than the budget (a rolling window, not fixed buckets). A granted request is in flight until `settle` and
 * then logged at the settle time, so the slot it frees is one window after the upstream counted it, however
 * late the request left. Waiters of a kind are served first in, first out, with one timer armed for the
 * moment the next slot frees; nothing polls.
 */
export function createMemoryRateGate(budget: RateBudget, opts: MemoryRateGateOptions = {}): RateGate {
  for (const [name, value] of [
    ['reads', budget.reads],
    ['writes', budget.writes],
    ['windowMs', budget.windowMs],
  ] as const) {
    if (!Number.isFinite(value) || value < 1) throw new TypeError(`budget.${name} must be a number >= 1, got ${value}`);
  }
  const now = opts.now ?? Date.now;
  const limit: Record<RequestKind, number> = { read: Math.floor(budget.reads), write: Math.floor(budget.writes) };
  // Settle times, ascending; and grant times of requests still in flight, ascending.
  const sent: Record<RequestKind, number[]> = { read: [], write: [] };
  const inFlight: Record<RequestKind, number[]> = { read: [], write: [] };
  // An in-flight request never settled counts as sent one window after its grant (a lost settle is not a leak).
  const leaseMs = budget.windowMs;
  const queues: Record<RequestKind, Waiter[]> = { read: [], write: [] };
  let pausedUntil = 0;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const dropUpTo = (list: number[], until: number) => {
    let drop = 0;
    while (drop < list.length && (list[drop] as number) <= until) drop++;
    if (drop > 0) list.splice(0, drop);
  };
  const prune = (kind: RequestKind, t: number) => {
    dropUpTo(sent[kind], t - budget.windowMs);
    dropUpTo(inFlight[kind], t - budget.windowMs - leaseMs);
  };

  /** The earliest time a request of `kind` may go out, given the log, the requests in flight and any pause. */
  const nextSlot = (kind: RequestKind, t: number): number => {
    prune(kind, t);
    const counted = sent[kind].length + inFlight[kind].length;
    if (counted < limit[kind]) return Math.max(t, pausedUntil);
    // The moments each counted request stops counting, earliest first; the one that brings the count under the
    // limit is the next slot. (An in-flight request is bounded by its lease; its settle brings that forward.)
    const ends = [
      ...sent[kind].map((at) => at + budget.windowMs),
      ...inFlight[kind].map((at) => at + leaseMs + budget.windowMs),
    ].sort((a, b) => a - b);
    return Math.max(ends[counted - limit[kind]] as number, pausedUntil);
  };

  const pump = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const t = now();
    let wakeAt = Number.POSITIVE_INFINITY;
    for (const kind of ['read', 'write'] as const) {
      const queue = queues[kind];
      while (queue.length > 0) {
        const at = nextSlot(kind, t);
        if (at > t) {
          wakeAt = Math.min(wakeAt, at);
          break;
        }
        const w = queue.shift() as Waiter;
        w.detach();
        inFlight[kind].push(t);
        w.resolve(t - w.since);
      }
    }
    if (wakeAt !== Number.POSITIVE_INFINITY) {
      timer = setTimeout(pump, Math.min(Math.max(0, wakeAt - t), MAX_TIMER_MS));
    }
  };

  return {
    acquire(kind, { signal }) {
      if (closed) return Promise.reject(aborted('closed'));
      if (signal.aborted) return Promise.reject(aborted('aborted'));
      const t = now();
      if (queues[kind].length === 0 && nextSlot(kind, t) <= t) {
        inFlight[kind].push(t);
        return Promise.resolve(0);
      }
      return new Promise<number>((resolve, reject) => {
        const onAbort = () => {
          const queue = queues[kind];
          const i = queue.indexOf(waiter);
          if (i >= 0) queue.splice(i, 1);
          reject(new UnderstudyError('US_ABORTED', 'rate gate: aborted', { cause: signal.reason }));
          pump();
        };
        const waiter: Waiter = {
          kind,
          since: t,
          resolve,
          reject,
          detach: () => signal.removeEventListener('abort', onAbort),
        };
        signal.addEventListener('abort', onAbort, { once: true });
        queues[kind].push(waiter);
        pump();
      });
    },
    settle(kind) {
      const t = now();
      prune(kind, t);
      // Which grant this was does not matter: every in-flight one counts until settled, and the oldest has the
      // nearest lease end, so settling it keeps the others' bounds.
      if (inFlight[kind].shift() === undefined) return;
      sent[kind].push(t);
      if (!closed) pump();
    },
    async pause(ms) {
      if (!(ms > 0)) return;
      pausedUntil = Math.max(pausedUntil, now() + ms);
      pump();
    },
    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      for (const kind of ['read', 'write'] as const) {
        for (const w of queues[kind].splice(0)) {
          w.detach();
          w.reject(aborted('closed'));
        }
      }
    },
  };
}
