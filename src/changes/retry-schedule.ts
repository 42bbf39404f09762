/**
 * How long a webhook batch waits before each retry: doubling from 1 s to 17 min, then 30 min, 1, 2, 4, 8 and 8 h.
 * 17 retries, 18 attempts, spread over 24 h 4 min (the issue asks for at least 24 h). A receiver back after an
 * outage of a few minutes gets the batch within about as long again (the wait after 8 failures is 4 min 16 s).
 */
export const WEBHOOK_RETRY_DELAYS_MS: readonly number[] = [
  ...Array.from({ length: 11 }, (_, i) => 1000 * 2 ** i),
  30 * 60_000,
  60 * 60_000,
  2 * 3_600_000,
  4 * 3_600_000,
  8 * 3_600_000,
  8 * 3_600_000,
];

/** Attempts per batch: the first, and one after each delay. */
export const WEBHOOK_ATTEMPTS = WEBHOOK_RETRY_DELAYS_MS.length + 1;

/** The wait before retry number `retry` (1-based), with up to 10% jitter so batches failing together drift apart. */
export function webhookRetryDelay(retry: number, random: () => number = Math.random): number {
  const i = Math.min(Math.max(retry, 1), WEBHOOK_RETRY_DELAYS_MS.length) - 1;
  const base = WEBHOOK_RETRY_DELAYS_MS[i] ?? 0;
  return Math.round(base + base * 0.1 * random());
}
