import type { IncomingMessage } from 'node:http';

/** What the router reads of a request: the raw target, its path and query string, and the method. */
export interface RequestLine {
  /** Path and query string as sent (the request log and fault matching use it). */
  readonly raw: string;
  readonly pathname: string;
  readonly search: string;
  /** Upper case. */
  readonly method: string;
}

/** A request under `/partners`: the decoded segments after it. */
export interface PartnersLine extends RequestLine {
  readonly segs: readonly string[];
}

/** A data request: `/partners/{version}/{tenant}/...`. */
export interface DataLine extends PartnersLine {
  readonly tenantSlug: string;
  /** The segments after the tenant (at least one). */
  readonly rest: string[];
}

export const requestLine = (req: IncomingMessage): RequestLine => {
  const raw = req.url ?? '/';
  const q = raw.indexOf('?');
  return {
    raw,
    pathname: q >= 0 ? raw.slice(0, q) : raw,
    search: q >= 0 ? raw.slice(q + 1) : '',
    method: (req.method ?? 'GET').toUpperCase(),
  };
};

/** The path is `prefix` or below it. */
export const isUnder = (pathname: string, prefix: string): boolean =>
  pathname === prefix || pathname.startsWith(`${prefix}/`);

/** Decodes the segments after `/partners` (a malformed escape throws, answered 500 by the server). */
export const partnersLine = (l: RequestLine): PartnersLine => ({
  ...l,
  segs: l.pathname.split('/').slice(2).filter(Boolean).map(decodeURIComponent),
});

export const dataLine = (l: PartnersLine): DataLine => ({
  ...l,
  tenantSlug: l.segs[1] as string,
  rest: l.segs.slice(2),
});
