/**
 * The one error hierarchy. Callers branch on `code`, never on message text; every code has an entry in
 * docs/errors.md. Errors never carry headers, query strings, bodies or API keys.
 */
export type ErrorCode =
  | 'US_USAGE'
  | 'US_CONFIG'
  | 'US_AUTH'
  | 'US_UPSTREAM'
  | 'US_UPSTREAM_UNAVAILABLE'
  | 'US_UPSTREAM_STUCK'
  | 'US_RATE_LIMITED'
  | 'US_BAD_RESPONSE'
  | 'US_RESPONSE_TOO_LARGE'
  | 'US_NOT_FOUND'
  | 'US_WRONG_BASE_URL'
  | 'US_VALIDATION'
  | 'US_STORE'
  | 'US_LOCKED'
  | 'US_LEASE_LOST'
  | 'US_READ_ONLY'
  | 'US_REDIS'
  | 'US_TIMEOUT'
  | 'US_OUTCOME_UNKNOWN'
  | 'US_ABORTED'
  | 'US_GATE_PARKED';

export class UnderstudyError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Bad command-line usage: an unknown flag, a missing argument. */
export class UsageError extends UnderstudyError {
  constructor(message: string, options?: ErrorOptions) {
    super('US_USAGE', message, options);
  }
}

/** Invalid configuration; the message names the failing field path. */
export class ConfigError extends UnderstudyError {
  constructor(message: string, options?: ErrorOptions) {
    super('US_CONFIG', message, options);
  }
}

const codeForStatus = (status: number): ErrorCode => {
  if (status === 401 || status === 403) return 'US_AUTH';
  if (status === 429) return 'US_RATE_LIMITED';
  if (status === 404) return 'US_NOT_FOUND';
  if (status === 408 || status === 425 || status >= 500) return 'US_UPSTREAM_UNAVAILABLE';
  return 'US_UPSTREAM';
};

/**
 * Whether a request reached the upstream: `answered` (a status came back), `unknown` (it went out and no
 * answer came: a write may or may not have been applied), `not-sent` (refused before sending, e.g. ECONNREFUSED).
 */
export type UpstreamOutcome = 'answered' | 'unknown' | 'not-sent';

/**
 * Where a request went, for the message: `at` is the record's path (`/partners/2026-02/harbour-opera/series/65f0…`:
 * tenant and id filled in, never a query string, a header or a key), so a user sees which record; without it the
 * message names the route template.
 */
export interface RequestPlace {
  readonly at?: string;
}

/**
 * An HTTP answer the client could not use. `route` is the route template
 * (`/partners/{version}/{tenant}/series/{id}`, for logs and metrics), never a URL with a query string; the message
 * names the record instead (`options.at`). `status` is 0 when no answer came (network error, timeout).
 */
export class UpstreamError extends UnderstudyError {
  constructor(
    readonly method: string,
    readonly route: string,
    readonly status: number,
    readonly upstreamMessage?: string,
    options?: ErrorOptions & RequestPlace & { code?: ErrorCode; retryAfterMs?: number; outcome?: UpstreamOutcome },
  ) {
    const detail = upstreamMessage ? `: ${upstreamMessage}` : '';
    super(
      options?.code ?? (status === 0 ? 'US_UPSTREAM_UNAVAILABLE' : codeForStatus(status)),
      `${method} ${options?.at ?? route} -> ${status === 0 ? 'no response' : status}${detail}`,
      options,
    );
    this.retryAfterMs = options?.retryAfterMs;
    this.outcome = options?.outcome ?? (status === 0 ? 'unknown' : 'answered');
  }
  readonly retryAfterMs: number | undefined;
  /** Did the request reach the upstream? Defaults to `answered` with a status, `unknown` with status 0. */
  readonly outcome: UpstreamOutcome;
}

/** The upstream answered 2xx with a body that does not parse or does not have the expected shape. */
export class BadResponseError extends UnderstudyError {
  constructor(
    readonly method: string,
    readonly route: string,
    message: string,
    options?: ErrorOptions & RequestPlace,
  ) {
    super('US_BAD_RESPONSE', `${method} ${options?.at ?? route}: ${message}`, options);
  }
  /** The upstream answered (2xx), so a write it carried was most likely applied. */
  readonly outcome: UpstreamOutcome = 'answered';
}

/**
 * A list page that does not advance the sync's position: the upstream (or a cache in front of it) ignores `where`
 * or `page` and keeps answering the same records with more to come. Final: asking again would loop for ever.
 */
export class StuckPageError extends UnderstudyError {
  constructor(
    readonly method: string,
    readonly route: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super('US_UPSTREAM_STUCK', `${method} ${route}: ${message}`, options);
  }
}

/**
 * An answer longer than `maxResponseBytes`: the download is stopped at the cap (or refused from its
 * `Content-Length`) and never retried, since the same request would only fetch the same body again.
 */
export class ResponseTooLargeError extends UnderstudyError {
  constructor(
    readonly method: string,
    readonly route: string,
    readonly status: number,
    readonly limitBytes: number,
    options?: ErrorOptions & RequestPlace,
  ) {
    super(
      'US_RESPONSE_TOO_LARGE',
      `${method} ${options?.at ?? route} -> ${status}: response larger than maxResponseBytes (${limitBytes} bytes)`,
      options,
    );
  }
  /** The upstream answered, so a write it carried was most likely applied. */
  readonly outcome: UpstreamOutcome = 'answered';
}

/** The one class test of the project: everything else branches on the `code` this tells apart. */
export const isUnderstudyError = (err: unknown): err is UnderstudyError => err instanceof UnderstudyError;

/** The code of an understudy error; undefined for any other error (a foreign one has none of ours). */
export const codeOf = (err: unknown): ErrorCode | undefined => (isUnderstudyError(err) ? err.code : undefined);

/** Whether `err` is an understudy error with `code`: how callers branch, never on the error's class. */
export const hasCode = <C extends ErrorCode>(err: unknown, code: C): err is UnderstudyError & { readonly code: C } =>
  isUnderstudyError(err) && err.code === code;

/**
 * A stop, not a failure: the caller stopped the work (`US_ABORTED`: a signal, a shutdown) or a worker job gave its
 * slot back while it waited for its key's budget (`US_GATE_PARKED`). Committed pages stay; nothing is recorded as
 * an error, and the next run resumes.
 */
export const isStop = (err: unknown): boolean => {
  const code = codeOf(err);
  return code === 'US_ABORTED' || code === 'US_GATE_PARKED';
};

/** The codes an `UpstreamError` carries: its status decides which, or `US_ABORTED` when its caller stopped it. */
const UPSTREAM_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'US_AUTH',
  'US_RATE_LIMITED',
  'US_NOT_FOUND',
  'US_UPSTREAM_UNAVAILABLE',
  'US_UPSTREAM',
  'US_ABORTED',
]);

/**
 * `err` as the upstream's answer, or its silence (`status` 0), as undici's callers read a status error: one of the
 * upstream's codes, then its `status` (and `outcome`, `upstreamMessage`, `retryAfterMs`).
 */
export const isUpstreamError = (err: unknown): err is UpstreamError =>
  isUnderstudyError(err) && UPSTREAM_CODES.has(err.code) && typeof (err as { status?: unknown }).status === 'number';

/** One line, safe to print: the message of an UnderstudyError, or a generic description otherwise. */
export const describeError = (err: unknown): string => {
  if (err instanceof Error) return err.message.split('\n')[0] ?? err.name;
  return String(err);
};

/**
 * A fenced commit found its run's lease taken over by another run: rolled back, nothing written. The run stops
 * that collection (`US_LEASE_LOST`); the run that took the lease carries on.
 */
export class LeaseLostError extends UnderstudyError {
  constructor(lease: { readonly tenant: string; readonly collection: string }) {
    super(
      'US_LEASE_LOST',
      `${lease.tenant}/${lease.collection}: this run's lease was taken over by another run; nothing more is committed`,
    );
  }
}
