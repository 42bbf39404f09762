import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JsonObject } from '../vocabulary/ids.js';
import { type RouteCall, route } from './sim-data-routes.js';
import type { TenantData } from './sim-db.js';
import { type ActiveFault, answerAfter, answerBefore, markStale } from './sim-faults.js';
import { isSimHttpError } from './sim-query.js';
import type { RateDecision } from './sim-rate-limit.js';
import type { DataLine } from './sim-request-line.js';
import { send } from './sim-respond.js';
import { countRequest, type SimState } from './sim-state.js';

const AUTH_RE = /^users API-Key ([^\s]+)$/;
const UNAUTHORIZED: JsonObject = { error: 'Unauthorized', message: 'Valid API key required' };
const TOO_MANY: JsonObject = { errors: [{ message: 'Too many requests' }] };

/** Logs the request once its answer is done or its socket closes; the tenant is filled in once the key is accepted. */
function logOnClose(s: SimState, res: ServerResponse, l: DataLine): { tenant?: string } {
  const seen: { tenant?: string } = {};
  res.on('close', () => {
    s.log.push({
      at: new Date(s.now()).toISOString(),
      method: l.method,
      path: l.raw,
      status: res.headersSent ? res.statusCode : 0,
      ...(seen.tenant ? { tenant: seen.tenant } : {}),
    });
  });
  return seen;
}

/** The tenant whose key the request carries (exactly `users API-Key <key>`), if any. */
const tenantOfKey = (s: SimState, req: IncomingMessage): TenantData | undefined => {
  const auth = req.headers.authorization;
  const m = typeof auth === 'string' ? AUTH_RE.exec(auth) : null;
  return m ? s.tenants.find((t) => t.key === m[1]) : undefined;
};

/** The key's rate limit for the request's kind, counted. */
const admit = (s: SimState, tenant: TenantData, method: string): RateDecision => {
  const kind = method === 'GET' || method === 'HEAD' ? 'read' : 'write';
  const decision = s.limiter.take(tenant.key, kind);
  const field = !decision.allowed ? 'rateLimited' : kind === 'read' ? 'reads' : 'writes';
  countRequest(s, tenant.slug, tenant.key, field);
  return decision;
};

/** How a fault shapes the answer of a request that is handled: replaced afterwards, or marked stale. */
interface AnswerFaults {
  readonly after: ActiveFault | undefined;
  readonly before: ActiveFault | undefined;
}

/** Runs the route and answers: with its result, its error, or the `after` fault in their place. */
async function answerRoute(
  s: SimState,
  req: IncomingMessage,
  res: ServerResponse,
  call: RouteCall,
  faults: AnswerFaults,
  headers: Record<string, string>,
): Promise<void> {
  try {
    const { status, body } = await route(s, req, call);
    if (faults.after) return answerAfter(faults.after, req.socket, res);
    if (faults.before?.kind === 'stale-page') markStale(body);
    send(res, status, body, headers);
  } catch (err) {
    if (faults.after) return answerAfter(faults.after, req.socket, res);
    if (isSimHttpError(err)) send(res, err.status, err.body(), { ...headers, ...(err.headers ?? {}) });
    else send(res, 500, { errors: [{ message: 'Something went wrong.' }] }, headers);
  }
}

/** A data request: the hooks, a queued fault, the key, the rate limit, then the route. */
export async function answerData(s: SimState, req: IncomingMessage, res: ServerResponse, l: DataLine): Promise<void> {
  const n = ++s.dataRequests;
  const seen = logOnClose(s, res, l);
  const keyTenant = tenantOfKey(s, req);
  for (const hook of s.hooks)
    await hook({ method: l.method, path: l.pathname, n, ...(keyTenant ? { tenant: keyTenant.slug } : {}) });
  const taken = s.faults.take(l.method, l.raw);
  // `after: true`: the request is handled as usual and only its answer is replaced (see answerAfter).
  const faults: AnswerFaults = taken?.after ? { after: taken, before: undefined } : { after: undefined, before: taken };
  const outcome = faults.before
    ? await answerBefore(faults.before, req, res, l.search)
    : { answered: false as const, query: l.search };
  if (outcome.answered) return;
  if (!keyTenant || keyTenant.slug !== l.tenantSlug) return send(res, 401, UNAUTHORIZED);
  seen.tenant = keyTenant.slug;
  const decision = admit(s, keyTenant, l.method);
  if (!decision.allowed) return send(res, 429, TOO_MANY, decision.headers);
  const call: RouteCall = { tenant: keyTenant, method: l.method, rest: l.rest, query: outcome.query };
  await answerRoute(s, req, res, call, faults, decision.headers);
}
