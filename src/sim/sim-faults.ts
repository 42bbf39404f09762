import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { UnderstudyError } from '../errors.js';

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
