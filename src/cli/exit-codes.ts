import { type ErrorCode, UnderstudyError } from '../errors.js';

/** 0 done; 2 bad usage or config; 3 key refused; 4 upstream unavailable after retries; 1 anything else. */
const EXIT = {
  US_USAGE: 2,
  US_CONFIG: 2,
  US_VALIDATION: 2,
  US_AUTH: 3,
  US_UPSTREAM_UNAVAILABLE: 4,
  US_UPSTREAM_STUCK: 4,
  US_RATE_LIMITED: 4,
  US_UPSTREAM: 1,
  US_BAD_RESPONSE: 1,
  US_RESPONSE_TOO_LARGE: 1,
  US_NOT_FOUND: 1,
  US_STORE: 1,
  US_READ_ONLY: 2,
  US_REDIS: 1,
  US_TIMEOUT: 1,
  US_OUTCOME_UNKNOWN: 1,
  US_ABORTED: 130,
} as const satisfies Record<ErrorCode, number>;

export const exitCodeFor = (err: unknown): number => (err instanceof UnderstudyError ? EXIT[err.code] : 1);
