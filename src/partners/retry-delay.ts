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
