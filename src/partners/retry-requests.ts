import { setTimeout as delay } from 'node:timers/promises';
import { isUpstreamError } from '../errors.js';
import { type FailureSpell, failureSpell } from '../failure-spell.js';
import type { Logger } from '../log.js';
import type { CallOptions, Prepaid } from './partners-client.js';
import { decideRetry, MIN_RETRY_DELAY_MS, type RetryDecision, type RetryPolicy } from './retry-delay.js';
import {
  abortedError,
  type Decode,
  type Failure,
  kindOf,
  optionAtLeastZero,
  type Send,
  type UpstreamCall,
} from './upstream-call.js';

/** The retry timing a caller may set (tests shorten it; production keeps the defaults). */
export interface RetryTiming {
  /** Attempts per read, retries included (429 waits come on top, at most as many again). Default 5. */
  readonly attempts?: number;
  /**
   * Floor of the first retry's wait, doubling per retry, plus up to half again as jitter; headers only ever
   * lengthen a wait. Default 250 (tests may lower it; production never does).
   */
  readonly baseDelayMs?: number;
  /** Cap on any wait, `Retry-After` included. Default 30000. */
  readonly maxDelayMs?: number;
}

export interface RetryRequestsOptions extends RetryTiming {
  /** Holds every request of the key for `ms` (the gate's `pause`): what a 429 asks for. */
  readonly pauseKey: (ms: number) => Promise<void>;
  /**
   * Where a spell of failures is said (see `spell`): its first failure and each change of cause at `warn` (`retrying
   * upstream request`, or `upstream request failed` when not retried) with `{ attempt, delayMs, status, route,
   * reason }`, every other failure at `debug`, the first success after it at `info` (`upstream requests work
   * again`, with `failures` and `ms`).
   */
  readonly log?: Logger | undefined;
  /**
   * The spell of failures of the key this client sends with, shared by every client of that key (the app keeps one
   * beside each key's gate), so that an outage is said once per key rather than once per retry. Default: one of
   * this layer's own.
   */
  readonly spell?: FailureSpell | undefined;
  /** Waits between retries; must reject when `signal` aborts. Default: timers/promises setTimeout. */
  readonly sleep?: ((ms: number, signal: AbortSignal) => Promise<void>) | undefined;
  /** Jitter source in [0, 1). Default Math.random. */
  readonly random?: (() => number) | undefined;
}

/** The retry policy of `timing`, checked up front (`TypeError`s naming the option), with the production defaults. */
export function retryPolicy(timing: RetryTiming = {}): RetryPolicy {
  return {
    attempts: Math.max(1, Math.floor(optionAtLeastZero('retry.attempts', timing.attempts, 5))),
    baseDelayMs: optionAtLeastZero('retry.baseDelayMs', timing.baseDelayMs, MIN_RETRY_DELAY_MS),
    maxDelayMs: optionAtLeastZero('retry.maxDelayMs', timing.maxDelayMs, 30_000),
  };
}

type Waiting = Extract<RetryDecision, { retry: true }>;

/** Waits out a retry's delay: a 429 pauses the whole key, anything else waits for this call alone. */
async function waitToRetry(
  next: Waiting,
  call: UpstreamCall,
  signal: AbortSignal,
  opts: RetryRequestsOptions,
  sleep: (ms: number, signal: AbortSignal) => Promise<void>,
  prepaid: Prepaid | undefined,
): Promise<void> {
  if (next.pauseKey) {
    // Every caller of this key waits, not just this one; the gate then holds the next attempt until the pause ends.
    // A reservation's grants would pass the pause: they go back, and the sequence's next requests wait at the gate.
    prepaid?.forfeit();
    await opts.pauseKey(next.delayMs);
    return;
  }
  try {
    await sleep(next.delayMs, signal);
  } catch (err) {
    if (signal.aborted) throw abortedError(call, signal, 'not-sent');
    throw err;
  }
}

/**
 * What a failed attempt says went wrong, the same text for every attempt that failed the same way (a spell's
 * cause): where a request got no answer and why (`ECONNREFUSED at 127.0.0.1:4010: connection refused (nothing
 * listens there)`), else the status (`HTTP 503`), else what was wrong with a 2xx (`HTTP 200: body not received
 * (UND_ERR_BODY_TIMEOUT)`).
 */
function failureCause(f: Failure): string {
  const said = isUpstreamError(f.error) ? f.error.upstreamMessage : undefined;
  if (f.status === 0) return said ?? f.error.message;
  if (f.status >= 400) return `HTTP ${f.status}`;
  return `HTTP ${f.status}: ${said ?? `an answer it cannot use (${f.error.code})`}`;
}

/** Says a failure of the key's spell: its news at `warn`, a repeat at `debug` (it is counted). */
function sayFailure(opts: RetryRequestsOptions, spell: FailureSpell, failure: Failure, at: SaidAt): void {
  const reason = failureCause(failure);
  const news = spell.failed(reason);
  const fields = {
    ...(at.retry ? { attempt: at.retry.attempt, delayMs: at.retry.delayMs } : {}),
    status: failure.status,
    route: at.route,
    reason,
    ...(news?.previousCause ? { previousReason: news.previousCause, failuresBefore: news.failuresBefore } : {}),
  };
  const msg = at.retry ? 'retrying upstream request' : 'upstream request failed';
  if (news) opts.log?.warn(fields, msg);
  else opts.log?.debug(fields, msg);
}

/** Where a failure was met: its route, and the retry that follows it (none when it is thrown). */
interface SaidAt {
  readonly route: string;
  readonly retry: Waiting | null;
}

/** Says the end of the key's spell, if a spell was running: once, at `info`. */
function sayRecovery(opts: RetryRequestsOptions, spell: FailureSpell, route: string): void {
  const end = spell.succeeded();
  if (end)
    opts.log?.info({ route, failures: end.failures, ms: end.ms, reason: end.cause }, 'upstream requests work again');
}

/**
 * The retry layer: sends a call again while `decideRetry` (retry-delay.ts, the one policy) says so. Reads retry
 * network errors, timeouts, 408, 425, 429, 5xx and unusable 2xx bodies; writes only 429s and connections refused
 * before sending. The last failure is thrown; thrown `UpstreamError`s carry `outcome`. Every failure that could be
 * retried (whether this call retries it or not) belongs to the key's spell (`spell`); a final one (a 4xx, a stop)
 * neither extends nor ends it.
 */
export function retryRequests(opts: RetryRequestsOptions): (next: Decode) => Send {
  const policy = retryPolicy(opts);
  const sleep = opts.sleep ?? ((ms: number, signal: AbortSignal) => delay(ms, undefined, { signal }));
  const random = opts.random ?? Math.random;
  const spell = opts.spell ?? failureSpell();
  return (next) =>
    async <T>(call: UpstreamCall<T>, callOpts: CallOptions): Promise<T> => {
      const { signal } = callOpts;
      const read = kindOf(call) === 'read';
      let failures = 0;
      let rateWaits = 0;
      for (;;) {
        if (signal.aborted) throw abortedError(call, signal, 'not-sent');
        const result = await next(call, callOpts);
        if (result.ok) {
          sayRecovery(opts, spell, call.route);
          return result.value;
        }
        const { error, retry: cls, hintMs } = result;
        if (cls === 'rate') rateWaits++;
        else failures++;
        const decision = decideRetry({ cls, read, failures, rateWaits, hintMs }, policy, random);
        const retry = decision.retry ? decision : null;
        if (cls !== 'final') sayFailure(opts, spell, result, { route: call.route, retry });
        if (!retry) throw error;
        await waitToRetry(retry, call, signal, opts, sleep, callOpts.prepaid);
      }
    };
}
