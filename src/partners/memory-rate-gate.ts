import { UnderstudyError } from '../errors.js';
import type { RateBudget, RateGate, RequestKind } from './rate-gate.js';

export interface MemoryRateGateOptions {
  /** Clock in milliseconds; default `Date.now`. Timers are scheduled from its readings. */
  readonly now?: () => number;
}

interface Waiter {
  readonly since: number;
  readonly resolve: (waitedMs: number) => void;
  readonly reject: (err: unknown) => void;
  readonly detach: () => void;
}

/** Everything one gate knows; only the functions of this file read or change it. */
interface GateState {
  readonly now: () => number;
  readonly windowMs: number;
  /** An in-flight request never settled counts as sent one window after its grant (a lost settle is not a leak). */
  readonly leaseMs: number;
  readonly limit: Record<RequestKind, number>;
  /** Settle times, ascending. */
  readonly sent: Record<RequestKind, number[]>;
  /** Grant times of requests still in flight, ascending. */
  readonly inFlight: Record<RequestKind, number[]>;
  readonly queues: Record<RequestKind, Waiter[]>;
  pausedUntil: number;
  timer: NodeJS.Timeout | undefined;
  closed: boolean;
}

const KINDS = ['read', 'write'] as const;

// setTimeout overflows past 2^31-1 ms and fires at once; longer waits are re-armed when they fire.
const MAX_TIMER_MS = 2_147_483_647;

const aborted = (reason: string) => new UnderstudyError('US_ABORTED', `rate gate: ${reason}`);

function checkBudget(budget: RateBudget): void {
  for (const [name, value] of [
    ['reads', budget.reads],
    ['writes', budget.writes],
    ['windowMs', budget.windowMs],
  ] as const) {
    if (!Number.isFinite(value) || value < 1) throw new TypeError(`budget.${name} must be a number >= 1, got ${value}`);
  }
}

function dropUpTo(list: number[], until: number): void {
  let drop = 0;
  while (drop < list.length && (list[drop] as number) <= until) drop++;
  if (drop > 0) list.splice(0, drop);
}

function prune(s: GateState, kind: RequestKind, t: number): void {
  dropUpTo(s.sent[kind], t - s.windowMs);
  dropUpTo(s.inFlight[kind], t - s.windowMs - s.leaseMs);
}

/** The earliest time a request of `kind` may go out, given the log, the requests in flight and any pause. */
function nextSlot(s: GateState, kind: RequestKind, t: number): number {
  prune(s, kind, t);
  const counted = s.sent[kind].length + s.inFlight[kind].length;
  if (counted < s.limit[kind]) return Math.max(t, s.pausedUntil);
  // The moments each counted request stops counting, earliest first; the one that brings the count under the
  // limit is the next slot. (An in-flight request is bounded by its lease; its settle brings that forward.)
  const ends = [
    ...s.sent[kind].map((at) => at + s.windowMs),
    ...s.inFlight[kind].map((at) => at + s.leaseMs + s.windowMs),
  ].sort((a, b) => a - b);
  return Math.max(ends[counted - s.limit[kind]] as number, s.pausedUntil);
}

/** Grants every waiter whose slot has come, first in first out per kind; returns when the next one is due. */
function grantDue(s: GateState, kind: RequestKind, t: number): number {
  const queue = s.queues[kind];
  while (queue.length > 0) {
    const at = nextSlot(s, kind, t);
    if (at > t) return at;
    const w = queue.shift() as Waiter;
    w.detach();
    s.inFlight[kind].push(t);
    w.resolve(t - w.since);
  }
  return Number.POSITIVE_INFINITY;
}

/** Serves the waiters that may go now and arms the one timer for the next slot; nothing polls. */
function pump(s: GateState): void {
  if (s.timer) clearTimeout(s.timer);
  s.timer = undefined;
  const t = s.now();
  const wakeAt = Math.min(...KINDS.map((kind) => grantDue(s, kind, t)));
  if (wakeAt !== Number.POSITIVE_INFINITY) {
    s.timer = setTimeout(() => pump(s), Math.min(Math.max(0, wakeAt - t), MAX_TIMER_MS));
  }
}

function acquire(s: GateState, kind: RequestKind, signal: AbortSignal): Promise<number> {
  if (s.closed) return Promise.reject(aborted('closed'));
  if (signal.aborted) return Promise.reject(aborted('aborted'));
  const t = s.now();
  if (s.queues[kind].length === 0 && nextSlot(s, kind, t) <= t) {
    s.inFlight[kind].push(t);
    return Promise.resolve(0);
  }
  return new Promise<number>((resolve, reject) => {
    const queue = s.queues[kind];
    const onAbort = () => {
      const i = queue.indexOf(waiter);
      if (i >= 0) queue.splice(i, 1);
      reject(new UnderstudyError('US_ABORTED', 'rate gate: aborted', { cause: signal.reason }));
      pump(s);
    };
    const waiter: Waiter = {
      since: t,
      resolve,
      reject,
      detach: () => signal.removeEventListener('abort', onAbort),
    };
    signal.addEventListener('abort', onAbort, { once: true });
    queue.push(waiter);
    pump(s);
  });
}

function settle(s: GateState, kind: RequestKind): void {
  const t = s.now();
  prune(s, kind, t);
  // Which grant this was does not matter: every in-flight one counts until settled, and the oldest has the
  // nearest lease end, so settling it keeps the others' bounds.
  if (s.inFlight[kind].shift() === undefined) return;
  s.sent[kind].push(t);
  if (!s.closed) pump(s);
}

function release(s: GateState, kind: RequestKind): void {
  // Any in-flight grant will do (see settle): the newest is dropped, so the others keep their lease order.
  if (s.inFlight[kind].pop() === undefined) return;
  if (!s.closed) pump(s);
}

function pause(s: GateState, ms: number): void {
  if (!(ms > 0)) return;
  s.pausedUntil = Math.max(s.pausedUntil, s.now() + ms);
  pump(s);
}

function close(s: GateState): void {
  if (s.closed) return;
  s.closed = true;
  if (s.timer) clearTimeout(s.timer);
  s.timer = undefined;
  for (const kind of KINDS) {
    for (const w of s.queues[kind].splice(0)) {
      w.detach();
      w.reject(aborted('closed'));
    }
  }
}

/**
 * A rate gate for one process: a log of send times per kind, so no window of `windowMs` ever holds more
 * than the budget (a rolling window, not fixed buckets). A granted request is in flight until `settle` and
 * then logged at the settle time, so the slot it frees is one window after the upstream counted it, however
 * late the request left. Waiters of a kind are served first in, first out, with one timer armed for the
 * moment the next slot frees; nothing polls.
 */
export function createMemoryRateGate(budget: RateBudget, opts: MemoryRateGateOptions = {}): RateGate {
  checkBudget(budget);
  const s: GateState = {
    now: opts.now ?? Date.now,
    windowMs: budget.windowMs,
    leaseMs: budget.windowMs,
    limit: { read: Math.floor(budget.reads), write: Math.floor(budget.writes) },
    sent: { read: [], write: [] },
    inFlight: { read: [], write: [] },
    queues: { read: [], write: [] },
    pausedUntil: 0,
    timer: undefined,
    closed: false,
  };
  return {
    acquire: (kind, { signal }) => acquire(s, kind, signal),
    settle: (kind) => settle(s, kind),
    release: (kind) => release(s, kind),
    pause: async (ms) => pause(s, ms),
    close: async () => close(s),
  };
}
