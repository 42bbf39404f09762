import { stringifyJson } from '../vocabulary/exact-json.js';

/** The answer to a read: a status, its headers, and the body as JSON text (null for a 304). */
export interface ReadAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | null;
}

const TITLES = { 400: 'Bad Request', 503: 'Service Unavailable' } as const;

/** An answer of serve's own (not the upstream's): an RFC 9457 problem with the `US_*` code, as serve's others. */
export function readProblem(status: 400 | 503, code: string, detail: string): ReadAnswer {
  return {
    status,
    headers: {
      'content-type': 'application/problem+json',
      'cache-control': 'no-store',
      ...(status === 503 ? { 'retry-after': '5' } : {}),
    },
    body: stringifyJson({
      type: `urn:understudy:problem:${code.toLowerCase()}`,
      title: TITLES[status],
      status,
      detail,
      code,
    }),
  };
}
