import { describeError, hasCode, isUnderstudyError, isUpstreamError } from '../errors.js';
import { isGateParked } from '../partners/gate-parking.js';

/** What to do about a failed write attempt. */
export type FailureClass =
  /** 429 (or, `parked`, the key's own budget ran out while others wait): try again later, no attempt spent. */
  | { readonly kind: 'rate'; readonly waitMs: number; readonly parked: boolean }
  /** Network error, timeout, 408, 425, 5xx, a 2xx cut off: back off and try again while attempts last. */
  | {
      readonly kind: 'retry';
      /** The request went out and no usable answer came: it may have been applied. */
      readonly unknownOutcome: boolean;
      readonly status: number | null;
      readonly message: string;
      readonly code: string;
    }
  /** 400, 401, 403, 404, 409, 422 and every other answer that will not change: fail now with the upstream's words. */
  | { readonly kind: 'final'; readonly status: number | null; readonly message: string; readonly code: string }
  /** The process is stopping: hand the job back (`unknownOutcome`: the request in flight may have gone out). */
  | { readonly kind: 'aborted'; readonly unknownOutcome: boolean };

/** Statuses worth another try; every other 4xx is final. */
const RETRYABLE = (status: number): boolean => status === 408 || status === 425 || status >= 500;

/**
 * Answers after which a write may have been applied: a gateway or server error can come after the upstream stored
 * the record (Payload behind a proxy that timed out), so a create must look before it is sent again.
 */
const MAYBE_APPLIED = new Set([500, 502, 503, 504]);

/** Sorts an error from a write attempt into the retry classes of docs/writes.md. */
export function classifyFailure(err: unknown, defaultRateWaitMs = 1000): FailureClass {
  if (isGateParked(err)) {
    return { kind: 'rate', waitMs: err.retryInMs, parked: true };
  }
  if (hasCode(err, 'US_ABORTED')) {
    return { kind: 'aborted', unknownOutcome: isUpstreamError(err) && err.outcome === 'unknown' };
  }
  if (isUpstreamError(err)) {
    const message = err.message;
    if (err.status === 429) {
      return { kind: 'rate', waitMs: err.retryAfterMs ?? defaultRateWaitMs, parked: false };
    }
    // A 2xx whose body broke off mid-read: the write was applied, its answer lost.
    const cutOff = err.status >= 200 && err.status < 300;
    if (err.status === 0 || cutOff || RETRYABLE(err.status)) {
      return {
        kind: 'retry',
        unknownOutcome: err.outcome === 'unknown' || cutOff || MAYBE_APPLIED.has(err.status),
        status: err.status === 0 ? null : err.status,
        message,
        code: err.code,
      };
    }
    return { kind: 'final', status: err.status, message, code: err.code };
  }
  if (hasCode(err, 'US_BAD_RESPONSE')) {
    // A 2xx whose body we cannot use: the write was most likely applied, so treat it as an unknown outcome.
    return { kind: 'retry', unknownOutcome: true, status: null, message: err.message, code: err.code };
  }
  if (isUnderstudyError(err)) {
    const retry = err.code === 'US_UPSTREAM_UNAVAILABLE' || err.code === 'US_STORE' || err.code === 'US_REDIS';
    return retry
      ? { kind: 'retry', unknownOutcome: false, status: null, message: err.message, code: err.code }
      : { kind: 'final', status: null, message: err.message, code: err.code };
  }
  return { kind: 'retry', unknownOutcome: false, status: null, message: describeError(err), code: 'US_INTERNAL' };
}
