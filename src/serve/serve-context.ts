import type { HttpBindings } from '@hono/node-server';
import type { Context, MiddlewareHandler } from 'hono';
import type { ApiScope, Config } from '../config/config-schema.js';
import type { Logger } from '../log.js';
import type { WriteQueue, WriteQueueHandle } from '../queue/write-queue.js';
import type { MirrorReader } from '../store/mirror-reader.js';
import type { RecordOrder } from '../writes/record-order.js';
import type { WriteLog } from '../writes/write-log.js';
import { ServeProblem } from './problem.js';
import { presentedToken, reaches, type ServeToken, tokenMatching } from './serve-tokens.js';
import { type RateDecision, rateLimitHeaders } from './token-rate-limit.js';

/** What serve's routes work with: one per process, shared by every request. */
export interface ServeContext {
  /** The config as last (re)loaded. */
  config(): Config;
  /** The tokens as last (re)loaded (SIGHUP). */
  tokens(): readonly ServeToken[];
  /** The validating write client (enqueue's own). */
  readonly writes: WriteQueue;
  /** The writes queue itself, for `writes show|failed|retry`. */
  readonly queue: WriteQueueHandle;
  readonly order: RecordOrder;
  /** The mirror read-only; null until it exists. */
  mirror(): Promise<MirrorReader | null>;
  /** The write log writable (a retried bulk write is marked); null until the mirror exists. */
  writableWriteLog(): Promise<WriteLog | null>;
  /** Counts one request against a token's minute. */
  rate(tokenName: string): Promise<RateDecision>;
  readonly log: Logger;
  /** Aborted when serve stops: open streams end. */
  readonly stopping: AbortSignal;
  /** Where a 401, 403 or 429 is counted (metrics), by token name (`unknown` before one is known). */
  refused(status: 401 | 403 | 429, tokenName: string): void;
}

/** The Hono environment of serve's routes: the token of the request once `authenticate` has passed. */
export interface ServeEnv {
  Variables: {
    token: ServeToken;
    /**
     * The `RateLimit-*` headers of the request, until a route puts them in its response itself (`takeLimits`):
     * `authenticate` adds those still here to the response, which costs a copy of its headers.
     */
    limits: Record<string, string> | null;
  };
}

const unauthorized = (detail: string) =>
  new ServeProblem(401, 'US_AUTH', detail, { 'www-authenticate': 'Bearer realm="understudy"' });

/**
 * A request header (`name` in lower case): from the Node request where one is bound, which spares building the web
 * `Headers` of every request; from the web Request elsewhere (a test's `app.request`).
 */
export function requestHeader(c: Context<ServeEnv>, name: string): string | undefined {
  const incoming = (c.env as Partial<HttpBindings> | undefined)?.incoming;
  if (!incoming) return c.req.header(name);
  const v = incoming.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/**
 * Every route past it needs a token (`Authorization: Bearer <token>` or `users API-Key <token>`): 401 without one
 * or with one that is not configured, 429 past the token's minute. Sets `token` for the routes.
 */
export function authenticate(ctx: ServeContext): MiddlewareHandler<ServeEnv> {
  return async (c, next) => {
    const presented = presentedToken(requestHeader(c, 'authorization'));
    if (presented === null) {
      ctx.refused(401, 'unknown');
      throw unauthorized('no token: send Authorization: Bearer <token> (or users API-Key <token>)');
    }
    const token = tokenMatching(ctx.tokens(), presented);
    if (token === null) {
      ctx.refused(401, 'unknown');
      throw unauthorized('the token is not one of api.tokens');
    }
    const decision = await ctx.rate(token.name);
    const headers = rateLimitHeaders(decision);
    if (!decision.allowed) {
      ctx.refused(429, token.name);
      throw new ServeProblem(
        429,
        'US_RATE_LIMITED',
        `token "${token.name}" is over its ${decision.limit} requests a minute (api.rateLimit); try again in ${decision.resetS} s`,
        headers,
      );
    }
    c.set('token', token);
    c.set('limits', headers);
    await next();
    const left = c.get('limits');
    if (left) for (const [k, v] of Object.entries(left)) c.res.headers.set(k, v);
  };
}

/** The request's `RateLimit-*` headers, for a route to put in its response itself (a hot route: no copy then). */
export function takeLimits(c: Context<ServeEnv>): Record<string, string> {
  const limits = c.get('limits') ?? {};
  c.set('limits', null);
  return limits;
}

/** Throws 403 unless the request's token holds `scope` and reaches `tenant` (when one is named). */
export function allow(c: Context<ServeEnv>, ctx: ServeContext, scope: ApiScope, tenant?: string): ServeToken {
  const token = c.get('token');
  if (!token.scopes.includes(scope)) {
    ctx.refused(403, token.name);
    throw new ServeProblem(403, 'US_AUTH', `token "${token.name}" does not hold the scope ${scope}`);
  }
  if (tenant !== undefined && !reaches(token, tenant)) {
    ctx.refused(403, token.name);
    throw new ServeProblem(403, 'US_AUTH', `token "${token.name}" does not reach tenant ${tenant}`);
  }
  return token;
}
