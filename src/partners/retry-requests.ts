import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '../log.js';
import type { CallOptions, Prepaid } from './partners-client.js';
import { decideRetry, MIN_RETRY_DELAY_MS, type RetryDecision, type RetryPolicy } from './retry-delay.js';
import { abortedError, type Decode, kindOf, optionAtLeastZero, type Send, type UpstreamCall } from './upstream-call.js';

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
  /** Warns once per retry with `{ attempt, delayMs, status, route }`. */
  readonly log?: Logger | undefined;
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
 * The retry layer: sends a call again while `decideRetry` (retry-delay.ts, the one policy) says so. Reads retry
 * network errors, timeouts, 408, 425, 429, 5xx and unusable 2xx bodies; writes only 429s and connections refused
 * before sending. The last failure is thrown; thrown `UpstreamError`s carry `outcome`.
 */
export function retryRequests(opts: RetryRequestsOptions): (next: Decode) => Send {
  const policy = retryPolicy(opts);
  const sleep = opts.sleep ?? ((ms: number, signal: AbortSignal) => delay(ms, undefined, { signal }));
  const random = opts.random ?? Math.random;
  return (next) =>
    async <T>(call: UpstreamCall<T>, callOpts: CallOptions): Promise<T> => {
      const { signal } = callOpts;
      const read = kindOf(call) === 'read';
      let failures = 0;
      let rateWaits = 0;
      for (;;) {
        if (signal.aborted) throw abortedError(call, signal, 'not-sent');
        const result = await next(call, callOpts);
        if (result.ok) return result.value;
        const { error, retry: cls, status, hintMs } = result;
        if (cls === 'rate') rateWaits++;
        else failures++;
        const decision = decideRetry({ cls, read, failures, rateWaits, hintMs }, policy, random);
        if (!decision.retry) throw error;
        opts.log?.warn(
          { attempt: decision.attempt, delayMs: decision.delayMs, status, route: call.route },
          'retrying upstream request',
        );
        await waitToRetry(decision, call, signal, opts, sleep, callOpts.prepaid);
      }
    };
}
