import { BadResponseError, UpstreamError } from '../errors.js';
import { parseExactJson } from '../vocabulary/exact-json.js';
import { isJsonObject } from '../vocabulary/ids.js';
import { rateLimitResetMs, retryAfterMs } from './retry-delay.js';
import {
  type Decode,
  type Dispatch,
  type Outcome,
  placeOf,
  type ReadAnswer,
  type UpstreamCall,
} from './upstream-call.js';

export interface ParseAnswerOptions {
  /** The key: cut out of anything the upstream says before it goes into an error. */
  readonly secret: string;
  /** Clock for `Retry-After` dates. Default Date.now. */
  readonly now?: () => number;
}

/** The upstream's own words from `{message}`, `{error, message}` or Payload's `{errors: [{message}]}`. */
export function upstreamMessage(body: unknown): string | undefined {
  if (!isJsonObject(body)) return undefined;
  const { message, error, errors } = body;
  if (Array.isArray(errors)) {
    const texts = errors.flatMap((e) => (isJsonObject(e) && typeof e.message === 'string' ? [e.message] : []));
    if (texts.length > 0) return texts.join('; ');
  }
  if (typeof message === 'string' && message) return message;
  if (typeof error === 'string' && error) return error;
  if (isJsonObject(error) && typeof error.message === 'string') return error.message;
  return undefined;
}

/** A 2xx: its JSON through the call's shape. A read with an unusable body is worth another try; so is a write's. */
function parseSuccess<T>(call: UpstreamCall<T>, answer: ReadAnswer): Outcome<T> {
  const { method, route } = call;
  const { status, text } = answer;
  const bad = (message: string, options: ErrorOptions = {}): Outcome<T> => {
    const error = new BadResponseError(method, route, message, { ...options, ...placeOf(call) });
    return { ok: false, error, retry: 'transient', status };
  };
  let json: unknown;
  if (text.trim() === '') {
    if (method === 'GET') return bad(`empty body with status ${status}`);
    json = {};
  } else {
    try {
      json = parseExactJson(text);
    } catch (err) {
      return bad('body is not valid JSON', { cause: err });
    }
  }
  const shaped = call.shape(json);
  return shaped.ok ? { ok: true, value: shaped.value } : bad(shaped.message);
}

/**
 * Any other status: an `UpstreamError` with the upstream's words (the key cut out) and its wait hint. A 429 is
 * `rate`; 408, 425 and 5xx are `transient`; the rest `final`.
 */
function parseRefusal(call: UpstreamCall, answer: ReadAnswer, now: number, scrub: (s?: string) => string | undefined) {
  const { status, headers, text } = answer;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const hintMs = retryAfterMs(headers, now) ?? (status === 429 ? rateLimitResetMs(headers, now, status) : undefined);
  const error = new UpstreamError(call.method, call.route, status, scrub(upstreamMessage(body)), {
    ...(hintMs === undefined ? {} : { retryAfterMs: hintMs }),
    ...placeOf(call),
  });
  const retry = status === 429 ? 'rate' : status === 408 || status === 425 || status >= 500 ? 'transient' : 'final';
  return { ok: false, error, retry, status, hintMs } as const;
}

/**
 * The answer parser: turns each read answer into the call's value (its JSON through `call.shape`, e.g. the list
 * envelope of `list-envelope.ts`) or a failure classed for the retry layer.
 */
export function parseAnswers(opts: ParseAnswerOptions): (next: Dispatch<Outcome<ReadAnswer>>) => Decode {
  const now = opts.now ?? Date.now;
  const { secret } = opts;
  const scrub = (text: string | undefined): string | undefined =>
    text === undefined ? undefined : text.split(secret).join('[redacted]').slice(0, 500);
  return (next) =>
    async <T>(call: UpstreamCall<T>, callOpts: Parameters<Decode>[1]): Promise<Outcome<T>> => {
      const read = await next(call, callOpts);
      if (!read.ok) return read;
      const t = now();
      // `RateLimit-Remaining: 0` on a success is not acted on: the gate paces this key by the same budget and
      // window, and pausing for the upstream's rounded-up reset would idle every process once the window is full.
      // On a 429, `Retry-After` (or `RateLimit-Reset`) pauses the whole key (the retry layer).
      const { status } = read.value;
      return status >= 200 && status < 300 ? parseSuccess(call, read.value) : parseRefusal(call, read.value, t, scrub);
    };
}
