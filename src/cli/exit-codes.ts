import { codeOf, type ErrorCode } from '../errors.js';

/**
 * Every exit code understudy uses, the one map every command goes through (docs/errors.md, "Exit codes").
 * 75 is sysexits' EX_TEMPFAIL: nothing went wrong, try again later (a `sync` that found another run holding the
 * lock). 5 to 7 are `status --check`'s findings, worst first when several apply: 7, then 5, then 6.
 */
export const EXIT = {
  /** Done. */
  OK: 0,
  /** Anything else: a store error, a 4xx, a bad answer. */
  FAILURE: 1,
  /** Bad usage or config (a flag, a field, LOG_LEVEL, an env file). */
  USAGE: 2,
  /** The upstream refused a key (or the tenant slug). */
  AUTH: 3,
  /** The upstream unavailable after retries (network, 5xx, still 429). */
  UNAVAILABLE: 4,
  /** `status --check`: a collection's last run failed. */
  CHECK_FAILED: 5,
  /** `status --check`: a last success older than `--max-age` (or none yet). */
  CHECK_STALE: 6,
  /** `status --check`: the mirror is missing, or a configured tenant has nothing in it. */
  CHECK_MISSING: 7,
  /** EX_TEMPFAIL: skipped, another run holds the lock; try again later. */
  EX_TEMPFAIL: 75,
  /** Stopped by a signal (128 + SIGINT). */
  INTERRUPTED: 130,
} as const;

/** The exit code of each error code. */
const BY_CODE = {
  US_USAGE: EXIT.USAGE,
  US_CONFIG: EXIT.USAGE,
  US_VALIDATION: EXIT.USAGE,
  US_AUTH: EXIT.AUTH,
  US_UPSTREAM_UNAVAILABLE: EXIT.UNAVAILABLE,
  US_UPSTREAM_STUCK: EXIT.UNAVAILABLE,
  US_RATE_LIMITED: EXIT.UNAVAILABLE,
  US_UPSTREAM: EXIT.FAILURE,
  US_BAD_RESPONSE: EXIT.FAILURE,
  US_RESPONSE_TOO_LARGE: EXIT.FAILURE,
  US_NOT_FOUND: EXIT.FAILURE,
  US_WRONG_BASE_URL: EXIT.FAILURE,
  US_STORE: EXIT.FAILURE,
  US_LOCKED: EXIT.EX_TEMPFAIL,
  US_LEASE_LOST: EXIT.EX_TEMPFAIL,
  US_READ_ONLY: EXIT.USAGE,
  US_REDIS: EXIT.FAILURE,
  US_TIMEOUT: EXIT.FAILURE,
  US_OUTCOME_UNKNOWN: EXIT.FAILURE,
  US_ABORTED: EXIT.INTERRUPTED,
  US_GATE_PARKED: EXIT.INTERRUPTED,
} as const satisfies Record<ErrorCode, number>;

/** The exit code for an error code (as a report carries it); 1 for anything unknown. */
export const exitCodeOf = (code: string | undefined): number =>
  code !== undefined && code in BY_CODE ? BY_CODE[code as ErrorCode] : EXIT.FAILURE;

export const exitCodeFor = (err: unknown): number => exitCodeOf(codeOf(err));

/** `writes wait`: the write was not done when `--timeout` ran out (sysexits' EX_TEMPFAIL: try again later). */
export const EXIT_TIMEOUT = 75;
