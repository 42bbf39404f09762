import type { BulkFailure } from './write-log.js';
import type { WriteFailure } from './write-state.js';

/** Codes of failures that the same write can get past on another try: the upstream or Redis was unavailable. */
const RETRYABLE_CODES = new Set([
  'US_UPSTREAM_UNAVAILABLE',
  'US_RATE_LIMITED',
  'US_OUTCOME_UNKNOWN',
  'US_BAD_RESPONSE',
  'US_REDIS',
  'US_STORE',
  'US_TIMEOUT',
  'US_ABORTED',
  'US_GATE_PARKED',
  'US_INTERNAL',
]);

/** 408, 425, 429 and 5xx: answers that may differ next time. */
const retryableStatus = (status: number | null): boolean =>
  status !== null && (status === 408 || status === 425 || status === 429 || status >= 500);

/**
 * Whether a failed write can succeed when retried as it is: 5xx, timeouts, rate limits, Redis or the mirror
 * unavailable, and unknown outcomes (nothing recorded why: the worker died mid-request) are; a 404, 400, 401, 403,
 * 409, 422, a body the worker refused or a tenant it does not know are permanent (the same request gets the same
 * answer until something else changes).
 */
export function isRetryableFailure(error: WriteFailure | null): boolean {
  if (!error || error.code === null) return true;
  return RETRYABLE_CODES.has(error.code) || retryableStatus(error.status);
}

/** A partial bulk write is worth replaying when one of its records failed for a reason that may pass. */
export const isRetryablePartial = (failures: readonly BulkFailure[] | null): boolean =>
  (failures ?? []).some((f) => f.status === null || retryableStatus(f.status));
