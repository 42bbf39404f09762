import { stringifyJson } from '../vocabulary/exact-json.js';

/** The answer to a read: a status, its headers, and the body as JSON text (null for a 304). */
export interface ReadAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | null;
}

/** An answer of serve's own (not the upstream's): an RFC 9457 problem with the `US_*` code. */
export function readProblem(status: number, code: string, detail: string): ReadAnswer {
  return {
    status,
    headers: { 'content-type': 'application/problem+json' },
    body: stringifyJson({ type: 'about:blank', title: code, status, detail, code }),
  };
}
