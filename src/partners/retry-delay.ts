/** Response headers as undici gives them: lower-case names. */
export type ResponseHeaders = Record<string, string | string[] | undefined>;

const header = (headers: ResponseHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** `Retry-After` in milliseconds from `now`: delta seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(headers: ResponseHeaders, now: number): number | undefined {
  const value = header(headers, 'retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * How long until the key's budget refills, per `RateLimit-Reset` (delta seconds; values past 10^9 are read as
 * epoch seconds, as some servers send), but only when `RateLimit-Remaining` is 0 or the status is 429.
 */
export function rateLimitResetMs(headers: ResponseHeaders, now: number, status: number): number | undefined {
  const remaining = header(headers, 'ratelimit-remaining')?.trim();
  if (status !== 429 && remaining !== '0') return undefined;
  const reset = header(headers, 'ratelimit-reset')?.trim();
  if (!reset || !/^\d+(\.\d+)?$/.test(reset)) return undefined;
  const n = Number(reset);
  return n > 1e9 ? Math.max(0, Math.round(n * 1000 - now)) : Math.round(n * 1000);
}

/** Exponential backoff with full jitter: uniform in [0, min(maxMs, baseMs * 2^(n-1))) for the n-th retry. */
export function backoffMs(n: number, baseMs: number, maxMs: number, random: () => number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, n - 1));
  return Math.floor(random() * ceiling);
}

/** The shortest wait before any retry of an upstream request in production (the client's default floor). */
export const MIN_RETRY_DELAY_MS = 250;

export interface RetryPolicy {
  /** Attempts per request, retries included; 429 waits are counted apart, at most as many again. */
  readonly attempts: number;
  /** Floor of the first retry's wait; the floor doubles per retry. Production: `MIN_RETRY_DELAY_MS`. */
  readonly baseDelayMs: number;
  /** Cap on any wait, a header's included (never below the floor of the retry). */
  readonly maxDelayMs: number;
}

/**
 * The wait before the n-th retry (n >= 1): a floor of `baseMs * 2^(n-1)` (capped at `maxMs`) plus up to half of
 * it again as jitter, so processes retrying together drift apart; never less than the floor.
 */
export function floorBackoffMs(n: number, baseMs: number, maxMs: number, random: () => number): number {
  const floor = Math.min(maxMs, baseMs * 2 ** Math.max(0, n - 1));
  return Math.floor(floor + random() * (floor / 2));
}

/** How a failed attempt may be retried: `rate` a 429; `transient` reads only; `not-sent` anything; `final` never. */
export type RetryClass = 'rate' | 'transient' | 'not-sent' | 'final';

export type RetryDecision =
  | { readonly retry: false }
  | {
      readonly retry: true;
      /** The retry's number within its kind (1 for the first 429 wait, or the first failure). */
      readonly attempt: number;
      readonly delayMs: number;
      /** A 429: the whole key waits (the gate's pause), not just this request. */
      readonly pauseKey: boolean;
    };

/**
 * The one place retries of upstream requests are decided. `failures` and `rateWaits` count this request's
 * earlier failed attempts and 429 waits, this one included. Every wait has the backoff floor whatever the
 * upstream's `Retry-After` or `RateLimit-Reset` say (`hintMs`, possibly 0 or a date in the past): a header only
 * ever lengthens a wait, up to `maxDelayMs`.
 */
export function decideRetry(
  e: {
    readonly cls: RetryClass;
    readonly read: boolean;
    readonly failures: number;
    readonly rateWaits: number;
    readonly hintMs: number | undefined;
  },
  policy: RetryPolicy,
  random: () => number,
): RetryDecision {
  let attempt: number;
  if (e.cls === 'rate') {
    if (e.rateWaits > policy.attempts) return { retry: false };
    attempt = e.rateWaits;
  } else if (e.cls === 'not-sent' || (e.cls === 'transient' && e.read)) {
    if (e.failures >= policy.attempts) return { retry: false };
    attempt = e.failures;
  } else {
    return { retry: false };
  }
  const floor = floorBackoffMs(attempt, policy.baseDelayMs, policy.maxDelayMs, random);
  const delayMs = Math.max(floor, Math.min(e.hintMs ?? 0, policy.maxDelayMs));
  return { retry: true, attempt, delayMs, pauseKey: e.cls === 'rate' };
}
