import type { ErrorCode } from '../errors.js';
import { isUnderstudyError } from '../errors.js';

/** An error answer of `serve`: its HTTP status, its US_* code, one line of detail, and headers to send with it. */
export class ServeProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
    /** Members added to the problem (RFC 9457 extensions), e.g. the oldest seq kept. */
    readonly extra: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = 'ServeProblem';
  }
}

const TITLES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  410: 'Gone',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** The HTTP status of each error code an answer can carry. */
const STATUS_OF: Readonly<Record<ErrorCode, number>> = {
  US_USAGE: 400,
  US_VALIDATION: 422,
  US_CONFIG: 500,
  US_AUTH: 403,
  US_UPSTREAM: 502,
  US_UPSTREAM_UNAVAILABLE: 503,
  US_UPSTREAM_STUCK: 503,
  US_RATE_LIMITED: 429,
  US_BAD_RESPONSE: 502,
  US_RESPONSE_TOO_LARGE: 502,
  US_NOT_FOUND: 404,
  US_WRONG_BASE_URL: 404,
  US_STORE: 503,
  US_LOCKED: 409,
  US_LEASE_LOST: 409,
  US_READ_ONLY: 403,
  US_REDIS: 503,
  US_TIMEOUT: 504,
  US_OUTCOME_UNKNOWN: 502,
  US_ABORTED: 503,
  US_GATE_PARKED: 503,
};

/** Seconds a client waits before trying again after a 503 of a dependency (Redis, the mirror). */
const RETRY_AFTER_S = '5';

/**
 * The problem an error answers with: a `ServeProblem` as it is, an `UnderstudyError` by its code (its message is
 * one line that names no secret: errors.ts), anything else a 500 that says nothing of its insides.
 */
export function problemOf(err: unknown): ServeProblem {
  if (err instanceof ServeProblem) return err;
  if (isUnderstudyError(err)) {
    const status = STATUS_OF[err.code];
    const headers = status === 503 ? { 'retry-after': RETRY_AFTER_S } : {};
    return new ServeProblem(status, err.code, err.message.split('\n')[0] ?? err.code, headers);
  }
  return new ServeProblem(500, 'US_INTERNAL', 'an internal error: the serve log has the details');
}

/** The RFC 9457 body of a problem. */
export function problemBody(p: ServeProblem): Record<string, unknown> {
  return {
    type: `urn:understudy:problem:${p.code.toLowerCase()}`,
    title: TITLES[p.status] ?? 'Error',
    status: p.status,
    detail: p.message,
    code: p.code,
    ...p.extra,
  };
}

/** The answer of a problem: `application/problem+json`, its status and headers. */
export function problemResponse(p: ServeProblem): Response {
  return new Response(JSON.stringify(problemBody(p)), {
    status: p.status,
    headers: { 'content-type': 'application/problem+json', 'cache-control': 'no-store', ...p.headers },
  });
}
