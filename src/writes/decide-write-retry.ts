import { backoffMs } from '../partners/retry-delay.js';
import type { FailureClass } from './classify-failure.js';
import type { WriteProgress } from './write-progress.js';

/** How a write job retries (config `writes.*`). */
export interface WriteRetryPolicy {
  /** Attempts per write, the first included. */
  readonly attempts: number;
  /** Bound on the total time a write spends on 429s; default: no bound. */
  readonly maxRateLimitWaitMs?: number | undefined;
  /** Backoff between attempts: full jitter below min(maxMs, baseMs * 2^(n-1)). */
  readonly backoff: { readonly baseMs: number; readonly maxMs: number };
}

/** Where the failed attempt stands. */
export interface FailedAttempt {
  /** This attempt's number (1 for the first). */
  readonly attempt: number;
  /** An earlier attempt went out without a usable answer (or the process died while one was out). */
  readonly priorUnknown: boolean;
  /** Time spent on 429s before this attempt. */
  readonly rateWaitMs: number;
  /** How long this attempt took. */
  readonly elapsedMs: number;
  /** A create whose body has nothing to look it up by: it must not be sent again after an unknown outcome. */
  readonly createWithoutNaturalKey: boolean;
}

/** What happens to a write after a failed attempt. Every kind carries the progress to keep in the job. */
export type RetryDecision =
  /** The process is stopping: back to the queue at once; `attempts` counts the attempt only if it may have gone out. */
  | { readonly kind: 'hand-back'; readonly progress: WriteProgress }
  /** The key's own budget ran out while others wait: back in `delayMs`, no attempt spent. */
  | { readonly kind: 'park'; readonly delayMs: number; readonly progress: WriteProgress }
  /** A 429: again after the upstream's `Retry-After`, no attempt spent. */
  | { readonly kind: 'wait-rate'; readonly delayMs: number; readonly progress: WriteProgress }
  /** A transient failure: again after backoff, one attempt spent. */
  | {
      readonly kind: 'retry-after';
      readonly delayMs: number;
      readonly progress: WriteProgress;
      readonly status: number | null;
      readonly code: string;
      readonly message: string;
    }
  /** Never again: the upstream's answer will not change, attempts or the 429 bound ran out. */
  | {
      readonly kind: 'fail-final';
      readonly progress: WriteProgress;
      readonly status: number | null;
      readonly code: string;
      readonly message: string;
    }
  /** A create that may have been applied and cannot be looked up: never sent again on its own. */
  | {
      readonly kind: 'fail-unknown-outcome';
      readonly progress: WriteProgress;
      readonly status: number | null;
      /** Which attempt went out, and how it ended, for the message. */
      readonly what: string;
    };

/** The progress a decision keeps in the job. */
const progressOf = (attempts: number, unknownOutcome: boolean, rateWaitMs: number): WriteProgress => ({
  attempts,
  unknownOutcome,
  sending: false,
  rateWaitMs,
});

/**
 * A 429, or the key's own budget parked: delayed by Retry-After, no attempt spent, up to `maxRateLimitWaitMs` in
 * total.
 */
function afterRateLimit(
  cls: FailureClass & { kind: 'rate' },
  at: FailedAttempt,
  policy: WriteRetryPolicy,
): RetryDecision {
  // Parking waits for our own budget (bounded by its window); only the upstream's 429s count here.
  if (cls.parked) {
    return { kind: 'park', delayMs: cls.waitMs, progress: progressOf(at.attempt - 1, at.priorUnknown, at.rateWaitMs) };
  }
  const rateWaitMs = at.rateWaitMs + at.elapsedMs;
  const max = policy.maxRateLimitWaitMs;
  if (max !== undefined && rateWaitMs + cls.waitMs > max) {
    return {
      kind: 'fail-final',
      progress: progressOf(at.attempt - 1, at.priorUnknown, rateWaitMs),
      status: 429,
      code: 'US_RATE_LIMITED',
      message:
        `rate limited: still 429 after ${Math.round(rateWaitMs)} ms of waiting, and the upstream asks for ` +
        `${cls.waitMs} ms more, past writes.maxRateLimitWaitMs (${max} ms)`,
    };
  }
  return {
    kind: 'wait-rate',
    delayMs: cls.waitMs,
    progress: progressOf(at.attempt - 1, at.priorUnknown, rateWaitMs + cls.waitMs),
  };
}

/** A transient failure: backoff with jitter while attempts last, unless a create may have been applied unseen. */
function afterTransient(
  cls: FailureClass & { kind: 'retry' },
  at: FailedAttempt,
  policy: WriteRetryPolicy,
  random: () => number,
): RetryDecision {
  const unknownOutcome = at.priorUnknown || cls.unknownOutcome;
  const after = progressOf(at.attempt, unknownOutcome, at.rateWaitMs);
  if (unknownOutcome && at.createWithoutNaturalKey) {
    // Nothing to look it up by: sending it again could make a second record (docs/writes.md, rule 1).
    return {
      kind: 'fail-unknown-outcome',
      progress: after,
      status: cls.status,
      what: `attempt ${at.attempt} (${cls.message})`,
    };
  }
  if (at.attempt >= policy.attempts) {
    return {
      kind: 'fail-final',
      progress: after,
      status: cls.status,
      code: cls.code,
      message: `gave up after ${at.attempt} attempt(s): ${cls.message}`,
    };
  }
  const delayMs = backoffMs(at.attempt, policy.backoff.baseMs, policy.backoff.maxMs, random);
  return { kind: 'retry-after', delayMs, progress: after, status: cls.status, code: cls.code, message: cls.message };
}

/**
 * The one place retries of writes are decided (reads: `decideRetry` in src/partners/retry-delay.ts). 429: delayed by
 * Retry-After, no attempt spent, up to `maxRateLimitWaitMs` in total. Network errors, 408, 425, 5xx, a 2xx cut off:
 * backoff with jitter while attempts last, unless the write may have been applied and cannot be looked up. Every
 * other answer: final.
 */
export function decideWriteRetry(
  cls: FailureClass,
  at: FailedAttempt,
  policy: WriteRetryPolicy,
  random: () => number,
): RetryDecision {
  switch (cls.kind) {
    case 'aborted':
      return {
        kind: 'hand-back',
        progress: progressOf(
          cls.unknownOutcome ? at.attempt : at.attempt - 1,
          at.priorUnknown || cls.unknownOutcome,
          at.rateWaitMs,
        ),
      };
    case 'rate':
      return afterRateLimit(cls, at, policy);
    case 'retry':
      return afterTransient(cls, at, policy, random);
    case 'final':
      return {
        kind: 'fail-final',
        progress: progressOf(at.attempt, at.priorUnknown, at.rateWaitMs),
        status: cls.status,
        code: cls.code,
        message: cls.message,
      };
  }
}
