import { setTimeout as delay } from 'node:timers/promises';
import { type Agent, type Dispatcher, request } from 'undici';
import { BadResponseError, ResponseTooLargeError, type UnderstudyError, UpstreamError } from '../errors.js';
import type { Logger } from '../log.js';
import { API_VERSION, type BulkKind, type CollectionSlug } from '../vocabulary/collections.js';
import { parseExactJson, stringifyJson } from '../vocabulary/exact-json.js';
import { isJsonObject, type JsonObject, type RecordId, type TenantSlug, type UpstreamDoc } from '../vocabulary/ids.js';
import { parseListEnvelope } from './list-envelope.js';
import { networkCause } from './network-cause.js';
import type { BulkResult, CallOptions, ListPage, PartnersClient, ThemeSettingsSchema } from './partners-client.js';
import { toQueryString, withQuery } from './query-string.js';
import type { RateGate, RequestKind } from './rate-gate.js';
import {
  decideRetry,
  MIN_RETRY_DELAY_MS,
  type ResponseHeaders,
  type RetryClass,
  type RetryPolicy,
  rateLimitResetMs,
  retryAfterMs,
} from './retry-delay.js';

/** Default `maxResponseBytes`: 32 MiB. */
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

export interface HttpClientOptions {
  /** Origin (and optional prefix) of the upstream, e.g. `http://127.0.0.1:1234`; a trailing slash is tolerated. */
  readonly baseUrl: string;
  readonly tenant: TenantSlug;
  /** Sent only as `Authorization: users API-Key <key>`; never logged, never put in an error. */
  readonly apiKey: string;
  /** Every request acquires `read` (GET) or `write` first. */
  readonly gate: RateGate;
  /**
   * The process' one keep-alive pool (an undici `Agent` of `partnersAgentOptions()`), built by the composition root
   * and closed by it. Required: a hidden default pool would defeat "one pool per process" and no test would notice.
   */
  readonly dispatcher: Dispatcher;
  readonly retry?: {
    /** Attempts per read, retries included (429 waits come on top, at most as many again). Default 5. */
    readonly attempts?: number;
    /**
     * Floor of the first retry's wait, doubling per retry, plus up to half again as jitter; headers only ever
     * lengthen a wait. Default 250 (tests may lower it; production never does).
     */
    readonly baseDelayMs?: number;
    /** Cap on any wait, `Retry-After` included. Default 30000. */
    readonly maxDelayMs?: number;
  };
  readonly timeouts?: {
    /** Until the response headers arrive. Default 30000. */
    readonly headersMs?: number;
    /** Between two body chunks. Default 30000. */
    readonly bodyMs?: number;
  };
  /**
   * Longest response body read, in bytes, counted while streaming (and refused up front from `Content-Length`).
   * Over it the request fails with `US_RESPONSE_TOO_LARGE`, never retried. Default 32 MiB.
   */
  readonly maxResponseBytes?: number;
  /** Warns once per retry with `{ attempt, delayMs, status, route }`. */
  readonly log?: Logger;
  /** Waits between retries; must reject when `signal` aborts. Default: timers/promises setTimeout. */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Jitter source in [0, 1). Default Math.random. */
  readonly random?: () => number;
  /** Clock for `Retry-After` dates. Default Date.now. */
  readonly now?: () => number;
  /** Called once per request attempt that got an answer or failed, with the route template. */
  readonly onRequest?: (e: { method: string; route: string; status: number; ms: number }) => void;
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

/** A wait at the gate shorter than this is not worth telling anyone about. */
const WAITING_AFTER_MS = 300;

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

const errorCode = (err: unknown): string | undefined => {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR_SOCKET' && code !== 'UND_ERR') return code;
    const next = (e as { cause?: unknown }).cause;
    if (next === undefined) return typeof code === 'string' ? code : undefined;
    e = next;
  }
  return undefined;
};

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

type Shape<T> = (json: unknown) => { ok: true; value: T } | { ok: false; message: string };

const objectShape: Shape<JsonObject> = (json) =>
  isJsonObject(json) ? { ok: true, value: json } : { ok: false, message: 'expected a JSON object' };

/** Writes may answer `{doc, message}` or the bare record. */
const recordShape: Shape<UpstreamDoc> = (json) => {
  if (!isJsonObject(json)) return { ok: false, message: 'expected a JSON object' };
  const { doc } = json;
  if (isJsonObject(doc) && Object.keys(json).every((k) => k === 'doc' || k === 'message'))
    return { ok: true, value: doc };
  return { ok: true, value: json };
};

interface Call<T> {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Route template for logs and metrics: never a concrete URL. */
  readonly route: string;
  /** Concrete path below the base URL, query string included. */
  readonly path: string;
  readonly body?: JsonObject;
  readonly auth: boolean;
  readonly shape: Shape<T>;
}

type Attempt<T> =
  | { readonly ok: true; readonly value: T }
  | {
      readonly ok: false;
      readonly error: UnderstudyError;
      /** `rate`: a 429; `transient`: retryable for reads; `not-sent`: retryable for anything; `final`: never. */
      readonly retry: RetryClass;
      readonly status: number;
      readonly hintMs: number | undefined;
    };

const positive = (name: string, value: number | undefined, fallback: number): number => {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) throw new TypeError(`${name} must be a number >= 0, got ${value}`);
  return value;
};

/**
 * The Content Partners API over HTTP with undici, for one tenant and one key. Every request passes the rate gate;
 * reads retry network errors, timeouts, 408, 425, 429, 5xx and unusable 2xx bodies with full-jitter backoff;
 * writes retry only 429s and connections refused before sending. Thrown `UpstreamError`s carry `outcome`.
 */
export function createHttpPartnersClient(opts: HttpClientOptions): PartnersClient {
  if (typeof opts.baseUrl !== 'string' || !/^https?:\/\//.test(opts.baseUrl)) {
    throw new TypeError('baseUrl must be an http(s) URL');
  }
  if (typeof opts.apiKey !== 'string' || opts.apiKey.length === 0 || /[\r\n]/.test(opts.apiKey)) {
    throw new TypeError('apiKey must be a non-empty string without line breaks');
  }
  if (typeof opts.tenant !== 'string' || opts.tenant.length === 0) throw new TypeError('tenant must be non-empty');
  const attempts = Math.max(1, Math.floor(positive('retry.attempts', opts.retry?.attempts, 5)));
  const policy: RetryPolicy = {
    attempts,
    baseDelayMs: positive('retry.baseDelayMs', opts.retry?.baseDelayMs, MIN_RETRY_DELAY_MS),
    maxDelayMs: positive('retry.maxDelayMs', opts.retry?.maxDelayMs, 30_000),
  };
  const maxResponseBytes = positive('maxResponseBytes', opts.maxResponseBytes, DEFAULT_MAX_RESPONSE_BYTES);
  const headersMs = positive('timeouts.headersMs', opts.timeouts?.headersMs, 30_000);
  const bodyMs = positive('timeouts.bodyMs', opts.timeouts?.bodyMs, 30_000);
  const base = opts.baseUrl.replace(/\/+$/, '');
  const { dispatcher } = opts;
  if (!dispatcher) throw new TypeError('dispatcher is required (the composition root passes its one Agent)');
  const { gate, tenant, apiKey, log, onRequest } = opts;
  const sleep = opts.sleep ?? ((ms: number, signal: AbortSignal) => delay(ms, undefined, { signal }));
  const random = opts.random ?? Math.random;
  const now = opts.now ?? Date.now;
  const authorization = `users API-Key ${apiKey}`;
  const scrub = (text: string | undefined): string | undefined =>
    text === undefined ? undefined : text.split(apiKey).join('[redacted]').slice(0, 500);

  const tenantPath = `/partners/${API_VERSION}/${encodeURIComponent(tenant)}`;
  const tenantRoute = '/partners/{version}/{tenant}';
  const seg = (s: string) => encodeURIComponent(s);

  /** The record a call is about, for its errors: the path without its query string (tenant and id, never a key). */
  const placeOf = (call: Call<unknown>) => ({ at: call.path.split('?')[0] as string });
  const aborted = (signal: AbortSignal, call: Call<unknown>, outcome: 'unknown' | 'not-sent') =>
    new UpstreamError(call.method, call.route, 0, 'aborted', {
      code: 'US_ABORTED',
      outcome,
      cause: signal.reason,
      ...placeOf(call),
    });

  /** Reads the body as text, stopping (and dropping the connection) as soon as it passes `maxResponseBytes`. */
  async function readCapped(res: Dispatcher.ResponseData): Promise<string | null> {
    const declared = Number((res.headers as ResponseHeaders)['content-length'] ?? Number.NaN);
    if (declared > maxResponseBytes) {
      res.body.destroy();
      return null;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxResponseBytes) {
        res.body.destroy();
        return null;
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks, size).toString('utf8');
  }

  /**
   * One request. `answered` is called once the upstream's answer (or a failure) is here: the gate then counts
   * the request from that moment, a bound on when the upstream counted it.
   */
  async function attempt<T>(call: Call<T>, callOpts: CallOptions, answered: () => void): Promise<Attempt<T>> {
    const { method, route, signal } = { ...call, signal: callOpts.signal };
    const at = placeOf(call);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (call.auth) headers.authorization = authorization;
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    const started = performance.now();
    const report = (status: number) =>
      onRequest?.({ method, route, status, ms: Math.round(performance.now() - started) });
    let res: Dispatcher.ResponseData;
    try {
      res = await request(`${base}${call.path}`, {
        dispatcher,
        method,
        headers,
        // Exact JSON: a bigint (an integer beyond 2^53) goes out as the bare integer it is.
        body: call.body === undefined ? null : stringifyJson(call.body),
        signal,
        headersTimeout: headersMs,
        bodyTimeout: bodyMs,
      });
    } catch (err) {
      answered();
      report(0);
      const code = errorCode(err);
      const notSent = code !== undefined && NOT_SENT_CODES.has(code);
      // Counted only when the request may have reached the upstream.
      if (!notSent) callOpts.onAttempt?.();
      if (signal.aborted) throw aborted(signal, call, notSent ? 'not-sent' : 'unknown');
      const outcome = notSent ? 'not-sent' : 'unknown';
      const error = new UpstreamError(method, route, 0, networkCause(code, base), { cause: err, outcome, ...at });
      return { ok: false, error, retry: notSent ? 'not-sent' : 'transient', status: 0, hintMs: undefined };
    }
    answered();
    callOpts.onAttempt?.();
    const status = res.statusCode;
    const resHeaders = res.headers as ResponseHeaders;
    if (status === 429) callOpts.onRateLimited?.();
    let text: string;
    try {
      const capped = await readCapped(res);
      if (capped === null) {
        report(status);
        const error = new ResponseTooLargeError(method, route, status, maxResponseBytes, at);
        return { ok: false, error, retry: 'final', status, hintMs: undefined };
      }
      text = capped;
    } catch (err) {
      report(status);
      if (signal.aborted) throw aborted(signal, call, 'unknown');
      const code = errorCode(err);
      const error = new UpstreamError(method, route, status, `body not received (${code ?? 'error'})`, {
        code: 'US_UPSTREAM_UNAVAILABLE',
        outcome: status >= 200 && status < 300 ? 'answered' : 'unknown',
        cause: err,
        ...at,
      });
      return { ok: false, error, retry: 'transient', status, hintMs: undefined };
    }
    report(status);
    const t = now();
    // `RateLimit-Remaining: 0` on a success is not acted on: the gate paces this key by the same budget and
    // window, and pausing for the upstream's rounded-up reset would idle every process once the window is full.
    // On a 429, `Retry-After` (or `RateLimit-Reset`) pauses the whole key below.
    if (status >= 200 && status < 300) {
      let json: unknown;
      if (text.trim() === '') {
        if (method === 'GET') {
          const error = new BadResponseError(method, route, `empty body with status ${status}`, at);
          return { ok: false, error, retry: 'transient', status, hintMs: undefined };
        }
        json = {};
      } else {
        try {
          json = parseExactJson(text);
        } catch (err) {
          const error = new BadResponseError(method, route, 'body is not valid JSON', { cause: err, ...at });
          return { ok: false, error, retry: 'transient', status, hintMs: undefined };
        }
      }
      const shaped = call.shape(json);
      if (shaped.ok) return { ok: true, value: shaped.value };
      const error = new BadResponseError(method, route, shaped.message, at);
      return { ok: false, error, retry: 'transient', status, hintMs: undefined };
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const hintMs =
      retryAfterMs(resHeaders, t) ?? (status === 429 ? rateLimitResetMs(resHeaders, t, status) : undefined);
    const error = new UpstreamError(method, route, status, scrub(upstreamMessage(body)), {
      ...(hintMs === undefined ? {} : { retryAfterMs: hintMs }),
      ...at,
    });
    if (status === 429) return { ok: false, error, retry: 'rate', status, hintMs };
    if (status === 408 || status === 425 || status >= 500)
      return { ok: false, error, retry: 'transient', status, hintMs };
    return { ok: false, error, retry: 'final', status, hintMs };
  }

  /** Acquires the gate, telling `onWaiting` when the wait lasts more than a moment and when it ends. */
  async function waitAtGate(kind: RequestKind, callOpts: CallOptions): Promise<void> {
    const { onWaiting, signal } = callOpts;
    if (!onWaiting) {
      await gate.acquire(kind, { signal });
      return;
    }
    const since = Date.now();
    const told = setTimeout(() => onWaiting(kind, since), WAITING_AFTER_MS);
    try {
      await gate.acquire(kind, { signal });
    } finally {
      clearTimeout(told);
      onWaiting(kind, null);
    }
  }

  async function send<T>(call: Call<T>, callOpts: CallOptions): Promise<T> {
    const { signal } = callOpts;
    const kind: RequestKind = call.method === 'GET' ? 'read' : 'write';
    let failures = 0;
    let rateWaits = 0;
    for (;;) {
      if (signal.aborted) throw aborted(signal, call, 'not-sent');
      await waitAtGate(kind, callOpts);
      let settled = false;
      const answered = () => {
        if (settled) return;
        settled = true;
        gate.settle(kind);
      };
      let result: Attempt<T>;
      try {
        result = await attempt(call, callOpts, answered);
      } finally {
        answered();
      }
      if (result.ok) return result.value;
      const { error, retry, status, hintMs } = result;
      if (retry === 'rate') rateWaits++;
      else failures++;
      const next = decideRetry({ cls: retry, read: kind === 'read', failures, rateWaits, hintMs }, policy, random);
      if (!next.retry) throw error;
      log?.warn(
        { attempt: next.attempt, delayMs: next.delayMs, status, route: call.route },
        'retrying upstream request',
      );
      if (next.pauseKey) {
        // Every caller of this key waits, not just this one; acquire() then holds us until the pause ends.
        await gate.pause(next.delayMs);
      } else {
        try {
          await sleep(next.delayMs, signal);
        } catch (err) {
          if (signal.aborted) throw aborted(signal, call, 'not-sent');
          throw err;
        }
      }
    }
  }

  const collectionPath = (c: CollectionSlug, id?: RecordId) =>
    id === undefined ? `${tenantPath}/${seg(c)}` : `${tenantPath}/${seg(c)}/${seg(id)}`;
  const collectionRoute = (c: CollectionSlug, id?: RecordId) =>
    id === undefined ? `${tenantRoute}/${c}` : `${tenantRoute}/${c}/{id}`;

  return {
    tenant,
    listPage(q, callOpts) {
      const { collection, ...rest } = q;
      const shape: Shape<ListPage> = (json) => {
        const parsed = parseListEnvelope(json, rest);
        return parsed.ok ? { ok: true, value: parsed.page } : parsed;
      };
      const path = withQuery(collectionPath(collection), toQueryString(rest));
      return send({ method: 'GET', route: collectionRoute(collection), path, auth: true, shape }, callOpts);
    },
    getById(collection, id, q, callOpts) {
      const path = withQuery(collectionPath(collection, id), toQueryString(q));
      return send(
        { method: 'GET', route: collectionRoute(collection, id), path, auth: true, shape: objectShape },
        callOpts,
      );
    },
    themeSettingsSchema(collection, callOpts): Promise<ThemeSettingsSchema> {
      const path = `${collectionPath(collection)}/theme-settings/schema`;
      const route = `${collectionRoute(collection)}/theme-settings/schema`;
      return send({ method: 'GET', route, path, auth: true, shape: objectShape }, callOpts);
    },
    openapi(callOpts) {
      const path = `/partners/${API_VERSION}/openapi`;
      return send(
        { method: 'GET', route: '/partners/{version}/openapi', path, auth: false, shape: objectShape },
        callOpts,
      );
    },
    create(collection, body, q, callOpts) {
      const path = withQuery(collectionPath(collection), toQueryString(q));
      return send(
        { method: 'POST', route: collectionRoute(collection), path, body, auth: true, shape: recordShape },
        callOpts,
      );
    },
    update(collection, id, method, body, q, callOpts) {
      const path = withQuery(collectionPath(collection, id), toQueryString(q));
      return send(
        { method, route: collectionRoute(collection, id), path, body, auth: true, shape: recordShape },
        callOpts,
      );
    },
    delete(collection, id, callOpts) {
      return send(
        {
          method: 'DELETE',
          route: collectionRoute(collection, id),
          path: collectionPath(collection, id),
          auth: true,
          shape: recordShape,
        },
        callOpts,
      );
    },
    bulk(collection: CollectionSlug, kind: BulkKind, body, q, callOpts): Promise<BulkResult> {
      const path = withQuery(`${collectionPath(collection)}/${seg(kind)}`, toQueryString(q));
      const route = `${collectionRoute(collection)}/${kind}`;
      return send({ method: 'PATCH', route, path, body, auth: true, shape: objectShape }, callOpts);
    },
  };
}
