import { type UnderstudyError, UpstreamError } from '../errors.js';
import type { JsonObject } from '../vocabulary/ids.js';
import type { CallOptions } from './partners-client.js';
import type { RequestKind } from './rate-gate.js';
import type { ResponseHeaders, RetryClass } from './retry-delay.js';

/**
 * The vocabulary of the client's layers (undici's interceptors, as functions): the route table describes each
 * request as an `UpstreamCall`, and each layer is `(next) => dispatch`, adding one behaviour around the layer
 * inside it: the transport sends, the size cap reads the body, the report times it, the gate paces it, the
 * answer parser turns it into a value or a failure, and the retry layer decides what a failure becomes.
 */

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** How a route's 2xx JSON becomes its method's value, or why it cannot (a bad response). */
export type Shape<T> = (json: unknown) => { ok: true; value: T } | { ok: false; message: string };

/** One request as the route table describes it; layers read it and never change it. */
export interface UpstreamCall<T = unknown> {
  readonly method: HttpMethod;
  /** Route template for logs and metrics: never a concrete URL. */
  readonly route: string;
  /** Concrete path below the base URL, query string included. */
  readonly path: string;
  readonly body?: JsonObject;
  /** Whether the key goes with it (every route but the public description). */
  readonly auth: boolean;
  readonly shape: Shape<T>;
}

/** A failed attempt, as data: the retry layer decides from `retry` what becomes of it. */
export interface Failure {
  readonly ok: false;
  readonly error: UnderstudyError;
  /** `rate`: a 429; `transient`: retryable for reads; `not-sent`: retryable for anything; `final`: never. */
  readonly retry: RetryClass;
  /** The answer's status; 0 when none came. */
  readonly status: number;
  /** How long the upstream asked to wait (`Retry-After`, or `RateLimit-Reset` on a 429). */
  readonly hintMs?: number | undefined;
}

export type Outcome<T> = { readonly ok: true; readonly value: T } | Failure;

/** An answer whose headers are here and whose body is still to be read (what the transport gives). */
export interface StreamedAnswer {
  readonly status: number;
  readonly headers: ResponseHeaders;
  readonly body: AsyncIterable<Buffer> & { destroy(): unknown };
}

/** An answer read whole (what the size cap gives). */
export interface ReadAnswer {
  readonly status: number;
  readonly headers: ResponseHeaders;
  readonly text: string;
}

/** The caller's options for one attempt, plus what an outer layer asks of the inner ones. */
export interface AttemptOptions extends CallOptions {
  /** Called once the answer's headers (or a failure) are here: the gate counts the request from that moment. */
  readonly onAnswered?: () => void;
}

/** How a layer sends one attempt of a call. */
export type Dispatch<R> = (call: UpstreamCall, opts: AttemptOptions) => Promise<R>;
/** One attempt of a call, its answer parsed by the call's shape. */
export type Decode = <T>(call: UpstreamCall<T>, opts: AttemptOptions) => Promise<Outcome<T>>;
/** A call from start to end (retries included): its value, or the error it ends with. */
export type Send = <T>(call: UpstreamCall<T>, opts: CallOptions) => Promise<T>;

/** Reads take the read budget, everything else the write budget. */
export const kindOf = (call: UpstreamCall): RequestKind => (call.method === 'GET' ? 'read' : 'write');

/** The record a call is about, for its errors: the path without its query string (tenant and id, never a key). */
export const placeOf = (call: UpstreamCall): { readonly at: string } => ({ at: call.path.split('?')[0] as string });

/** The error of a call its caller stopped: `not-sent` before it left, `unknown` once it may have. */
export const abortedError = (call: UpstreamCall, signal: AbortSignal, outcome: 'unknown' | 'not-sent') =>
  new UpstreamError(call.method, call.route, 0, 'aborted', {
    code: 'US_ABORTED',
    outcome,
    cause: signal.reason,
    ...placeOf(call),
  });

/** A number option of a layer, checked up front: `>= 0`, or the fallback when absent. */
export function optionAtLeastZero(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) throw new TypeError(`${name} must be a number >= 0, got ${value}`);
  return value;
}
