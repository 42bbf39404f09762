import { type Agent, type Dispatcher, request } from 'undici';
import { UpstreamError } from '../errors.js';
import { stringifyJson } from '../vocabulary/exact-json.js';
import { errorCode, networkCause } from './network-cause.js';
import {
  type AttemptOptions,
  abortedError,
  type Dispatch,
  type Failure,
  type Outcome,
  optionAtLeastZero,
  placeOf,
  type StreamedAnswer,
  type UpstreamCall,
} from './upstream-call.js';

export interface HttpTransportOptions {
  /** Origin (and optional prefix) of the upstream, e.g. `http://127.0.0.1:1234`; a trailing slash is tolerated. */
  readonly baseUrl: string;
  /** Sent only as `Authorization: users API-Key <key>`; never logged, never put in an error. */
  readonly apiKey: string;
  /**
   * The process' one keep-alive pool (an undici `Agent` of `partnersAgentOptions()`), built by the composition root
   * and closed by it. Required: a hidden default pool would defeat "one pool per process" and no test would notice.
   */
  readonly dispatcher: Dispatcher;
  readonly timeouts?: {
    /** Until the response headers arrive. Default 30000. */
    readonly headersMs?: number;
    /** Between two body chunks. Default 30000. */
    readonly bodyMs?: number;
  };
}

/** Agent options for a keep-alive pool to one upstream origin; the composition root passes `new Agent(...)` of these. */
export function partnersAgentOptions(timeouts: { readonly connectMs?: number } = {}): Agent.Options {
  return {
    connect: { timeout: timeouts.connectMs ?? 10_000 },
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 600_000,
    connections: 16,
  };
}

/** Errors that prove the request never left this process, so even a write may be sent again. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
]);

function checkOptions(opts: HttpTransportOptions): void {
  if (typeof opts.baseUrl !== 'string' || !/^https?:\/\//.test(opts.baseUrl)) {
    throw new TypeError('baseUrl must be an http(s) URL');
  }
  if (typeof opts.apiKey !== 'string' || opts.apiKey.length === 0 || /[\r\n]/.test(opts.apiKey)) {
    throw new TypeError('apiKey must be a non-empty string without line breaks');
  }
  if (!opts.dispatcher) throw new TypeError('dispatcher is required (the composition root passes its one Agent)');
}

/** No answer came: the request was refused before it left (`not-sent`), or it went out and was lost (`unknown`). */
function networkFailure(call: UpstreamCall, opts: AttemptOptions, err: unknown, base: string): Failure {
  const code = errorCode(err);
  const notSent = code !== undefined && NOT_SENT_CODES.has(code);
  // Counted only when the request may have reached the upstream.
  if (!notSent) opts.onAttempt?.();
  const outcome = notSent ? 'not-sent' : 'unknown';
  if (opts.signal.aborted)
    return { ok: false, error: abortedError(call, opts.signal, outcome), retry: 'final', status: 0 };
  const error = new UpstreamError(call.method, call.route, 0, networkCause(code, base), {
    cause: err,
    outcome,
    ...placeOf(call),
  });
  return { ok: false, error, retry: notSent ? 'not-sent' : 'transient', status: 0 };
}

/**
 * The innermost layer: one HTTP request with undici on the app's pool, answering as soon as the headers are here
 * (the body is left to the size cap). Tells the caller of every attempt that may have reached the upstream
 * (`onAttempt`) and of every 429 (`onRateLimited`).
 */
export function httpTransport(opts: HttpTransportOptions): Dispatch<Outcome<StreamedAnswer>> {
  checkOptions(opts);
  const headersTimeout = optionAtLeastZero('timeouts.headersMs', opts.timeouts?.headersMs, 30_000);
  const bodyTimeout = optionAtLeastZero('timeouts.bodyMs', opts.timeouts?.bodyMs, 30_000);
  const base = opts.baseUrl.replace(/\/+$/, '');
  const { dispatcher } = opts;
  const authorization = `users API-Key ${opts.apiKey}`;
  return async (call, callOpts) => {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (call.auth) headers.authorization = authorization;
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    let res: Dispatcher.ResponseData;
    try {
      res = await request(`${base}${call.path}`, {
        dispatcher,
        method: call.method,
        headers,
        // Exact JSON: a bigint (an integer beyond 2^53) goes out as the bare integer it is.
        body: call.body === undefined ? null : stringifyJson(call.body),
        signal: callOpts.signal,
        headersTimeout,
        bodyTimeout,
      });
    } catch (err) {
      callOpts.onAnswered?.();
      return networkFailure(call, callOpts, err, base);
    }
    callOpts.onAnswered?.();
    callOpts.onAttempt?.();
    if (res.statusCode === 429) callOpts.onRateLimited?.();
    return { ok: true, value: { status: res.statusCode, headers: res.headers, body: res.body } };
  };
}
