import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { UnderstudyError } from '../errors.js';
import { isJsonObject, type JsonValue } from '../vocabulary/ids.js';
import { HUGE_DEFAULT_BYTES, sendHugeBody } from './sim-huge.js';
import { send } from './sim-respond.js';

/** Faults injected for the next N matching requests. */
export interface FaultSpec {
  /** stale-page: a list request is answered as if `where` and `page` were absent, with `hasNextPage: true`. */
  kind: 'latency' | 'status' | 'reset' | 'malformed' | 'rate-limit' | 'stale-page' | 'huge';
  count: number;
  /** latency: delay before answering normally (default 200). */
  ms?: number;
  /** status: the status to answer with (default 503). */
  status?: number;
  /** rate-limit: the Retry-After (and RateLimit-Reset) value in seconds, 0 included (default 1). */
  retryAfterSeconds?: number;
  /** huge: the body's length in bytes (default 300 MB): a valid, empty list envelope padded with whitespace. */
  bytes?: number;
  /** huge: send no Content-Length (chunked), so only reading tells the length. Default false. */
  chunked?: boolean;
  /** Only requests with this method and a path containing this substring. */
  match?: { method?: string; path?: string };
  /**
   * `status`, `reset` and `malformed` only: the request is handled first (a write is applied), then its answer is
   * replaced by the fault, as an upstream that stored a record and then failed to say so.
   */
  after?: boolean;
}

/** Kinds that can replace an answer after the request was handled (`after: true`). */
const AFTER_KINDS: readonly FaultSpec['kind'][] = ['status', 'reset', 'malformed'];

export type ActiveFault = Readonly<FaultSpec>;

export class FaultQueue {
  private faults: { spec: FaultSpec; left: number }[] = [];

  add(spec: FaultSpec): void {
    const kinds = ['latency', 'status', 'reset', 'malformed', 'rate-limit', 'stale-page', 'huge'];
    if (!kinds.includes(spec.kind))
      throw new UnderstudyError('US_VALIDATION', `fault kind must be one of ${kinds.join(', ')}`);
    const nonNegative = (name: 'retryAfterSeconds' | 'bytes', value: unknown) => {
      if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value) || value < 0))
        throw new UnderstudyError('US_VALIDATION', `fault ${name} must be a number >= 0`);
    };
    nonNegative('retryAfterSeconds', spec.retryAfterSeconds);
    nonNegative('bytes', spec.bytes);
    if (!Number.isInteger(spec.count) || spec.count < 1)
      throw new UnderstudyError('US_VALIDATION', 'fault count must be a positive integer');
    if (spec.after !== undefined && typeof spec.after !== 'boolean')
      throw new UnderstudyError('US_VALIDATION', 'fault after must be a boolean');
    if (spec.after && !AFTER_KINDS.includes(spec.kind))
      throw new UnderstudyError('US_VALIDATION', `fault after: true applies to ${AFTER_KINDS.join(', ')} only`);
    this.faults.push({ spec: { ...spec }, left: spec.count });
  }

  /** The fault for this request, if one matches (the first queued match is consumed). */
  take(method: string, path: string): ActiveFault | undefined {
    for (const f of this.faults) {
      const m = f.spec.match;
      if (m?.method && m.method.toUpperCase() !== method.toUpperCase()) continue;
      if (m?.path && !path.includes(m.path)) continue;
      f.left--;
      if (f.left <= 0) this.faults = this.faults.filter((x) => x !== f);
      return f.spec;
    }
    return undefined;
  }

  pending(): number {
    return this.faults.reduce((n, f) => n + f.left, 0);
  }

  clear(): void {
    this.faults = [];
  }
}

/**
 * Replaces the answer of a request that was already handled (`after: true`): a `status` error body, a socket
 * destroyed with no answer (`reset`), or a 2xx whose body breaks off (`malformed`).
 */
export function answerAfter(fault: ActiveFault, socket: Socket, res: ServerResponse): void {
  switch (fault.kind) {
    case 'reset':
      socket.destroy();
      return;
    case 'malformed': {
      const text = '{"id":"';
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': text.length + 64 });
      // Fewer bytes than announced, then the connection closes: the body breaks mid-read.
      res.write(text, () => socket.destroy());
      return;
    }
    default: {
      const status = fault.status ?? 503;
      const text = JSON.stringify({
        errors: [{ message: status >= 500 ? 'Service Unavailable' : `Injected ${status}` }],
      });
      res.writeHead(status, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(text),
      });
      res.end(text);
    }
  }
}

/** What a fault did before the request was handled: answered it, or let it through with this query string. */
export type BeforeOutcome = { readonly answered: true } | { readonly answered: false; readonly query: string };

const ANSWERED: BeforeOutcome = { answered: true };

/** The query string without `where` and `page` (the `stale-page` fault: a cache that ignores them). */
const staleQuery = (search: string): string => {
  const params = new URLSearchParams(search);
  for (const k of [...params.keys()]) if (k === 'page' || k === 'where' || k.startsWith('where[')) params.delete(k);
  return params.toString();
};

const sendInjectedStatus = (res: ServerResponse, status: number): void =>
  send(res, status, { errors: [{ message: status >= 500 ? 'Service Unavailable' : `Injected ${status}` }] });

const sendMalformed = (res: ServerResponse): void => {
  const text = '{"docs":[{"id":"';
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': text.length });
  res.end(text);
};

const sendRateLimited = (res: ServerResponse, retryAfterSeconds: number | undefined): void => {
  const secs = String(retryAfterSeconds ?? 1);
  send(
    res,
    429,
    { errors: [{ message: 'Too many requests' }] },
    { 'retry-after': secs, 'ratelimit-limit': '0', 'ratelimit-remaining': '0', 'ratelimit-reset': secs },
  );
};

/**
 * Applies a fault before the request is handled (before auth and the rate limit): it answers in the request's
 * place, or waits (`latency`), or changes the query (`stale-page`) and lets the request through.
 */
export async function answerBefore(
  fault: ActiveFault,
  req: IncomingMessage,
  res: ServerResponse,
  search: string,
): Promise<BeforeOutcome> {
  switch (fault.kind) {
    case 'latency':
      await new Promise((r) => setTimeout(r, fault.ms ?? 200));
      return { answered: false, query: search };
    case 'stale-page':
      return { answered: false, query: staleQuery(search) };
    case 'reset':
      req.socket.destroy();
      return ANSWERED;
    case 'status':
      sendInjectedStatus(res, fault.status ?? 503);
      return ANSWERED;
    case 'malformed':
      sendMalformed(res);
      return ANSWERED;
    case 'huge':
      await sendHugeBody(res, Math.floor(fault.bytes ?? HUGE_DEFAULT_BYTES), fault.chunked === true);
      return ANSWERED;
    case 'rate-limit':
      sendRateLimited(res, fault.retryAfterSeconds);
      return ANSWERED;
  }
}

/** A stale cache in front of the upstream (`stale-page`): a list answer always says "more to come", page 2. */
export const markStale = (body: JsonValue): void => {
  if (isJsonObject(body) && Array.isArray(body.docs)) Object.assign(body, { hasNextPage: true, nextPage: 2 });
};
