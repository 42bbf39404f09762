import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { UnderstudyError } from '../errors.js';
import {
  API_VERSION,
  BULK_ROUTES,
  type BulkKind,
  COLLECTIONS,
  type CollectionSlug,
  isCollectionSlug,
  type RouteSet,
  routesFor,
  THEME_SCHEMA_COLLECTIONS,
} from '../vocabulary/collections.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../vocabulary/ids.js';
import { tooDeepAt } from '../vocabulary/json-depth.js';
import { parseParams, type SimParams } from './parse-params.js';
import type { Prng } from './prng.js';
import { allowedMethods, routeMissing } from './sim-allowed-methods.js';
import { bulkUpdate } from './sim-bulk.js';
import { bulkByWhere } from './sim-bulk-where.js';
import { generateTenants, type TenantData, viewOf } from './sim-db.js';
import { answerAfter, type FaultQueue } from './sim-faults.js';
import { HUGE_DEFAULT_BYTES, sendHugeBody } from './sim-huge.js';
import { type MutateResult, type MutateSpec, mutate } from './sim-mutate.js';
import { buildOpenApi } from './sim-openapi.js';
import { graphiqlHtml, PIXEL_PNG, swaggerAsset, swaggerHtml } from './sim-pages.js';
import { SimHttpError, validationError } from './sim-query.js';
import type { RollingLimiter } from './sim-rate-limit.js';
import { getDoc, listDocs, notFound } from './sim-read.js';
import { type ShapeCtx, shapeDoc } from './sim-shape.js';
import { themeSettingsSchema } from './sim-theme-schema.js';
import { createDoc, deleteDoc, updateDoc } from './sim-writes.js';

export interface BeforeRequestInfo {
  readonly method: string;
  readonly path: string;
  readonly tenant?: string;
  /** 1-based count of data requests seen so far, this one included. */
  readonly n: number;
}
export type BeforeRequestHook = (req: BeforeRequestInfo) => void | Promise<void>;

export interface RequestLogEntry {
  readonly at: string;
  readonly method: string;
  /** Path and query string; never a header. */
  readonly path: string;
  readonly status: number;
  readonly tenant?: string;
}

export interface CounterSet {
  reads: number;
  writes: number;
  rateLimited: number;
}

export interface SimCounters {
  readonly total: CounterSet;
  /** By tenant slug. */
  readonly tenants: Record<string, CounterSet>;
  /** By the first 12 hex digits of the key's SHA-256. */
  readonly keys: Record<string, CounterSet>;
}

export const keyHash = (key: string): string => createHash('sha256').update(key).digest('hex').slice(0, 12);

const AUTH_RE = /^users API-Key ([^\s]+)$/;
const UNAUTHORIZED: JsonObject = { error: 'Unauthorized', message: 'Valid API key required' };
const FORBIDDEN_API: JsonObject = {
  error: 'Forbidden',
  message: 'API keys must use the Partners API at /partners/:version/:tenant/*',
};
const MAX_BODY = 1_000_000;
/**
 * Deepest nesting a write body may have: Payload on MongoDB cannot store a document nested deeper than 100 levels,
 * and a record nested thousands deep would break every later read of its collection.
 */
export const MAX_BODY_DEPTH = 100;

export interface SimState {
  readonly tenants: TenantData[];
  readonly seed: number;
  readonly routeSet: RouteSet;
  maxLimit: number;
  readonly limiter: RollingLimiter;
  readonly faults: FaultQueue;
  readonly hooks: Set<BeforeRequestHook>;
  readonly log: RequestLogEntry[];
  counters: SimCounters;
  dataRequests: number;
  origin: string;
  readonly now: () => number;
  /** Updates onto the latest version, as Payload 3 applies them (`SimulatorOptions.updatesOntoLatest`). */
  readonly updatesOntoLatest: boolean;
  readonly mutatePrng: Prng;
  mutationRev: number;
  openapi: JsonObject | undefined;
}

export const emptyCounters = (): SimCounters => ({
  total: { reads: 0, writes: 0, rateLimited: 0 },
  tenants: {},
  keys: {},
});

const send = (res: ServerResponse, status: number, body: JsonValue, headers: Record<string, string> = {}): void => {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
};

const sendRaw = (res: ServerResponse, status: number, body: string | Buffer, type: string): void => {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
};

const readBody = (req: IncomingMessage, collection: CollectionSlug): Promise<unknown> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) reject(new SimHttpError(413, 'Request body too large'));
      else chunks.push(c);
    });
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (text.trim() === '') return resolve(undefined);
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        return reject(new SimHttpError(400, 'The request body is not valid JSON'));
      }
      const deep = tooDeepAt(body, MAX_BODY_DEPTH);
      if (deep === null) return resolve(body);
      const field = deep.split(/[.[]/)[0] || 'body';
      reject(validationError(collection, [{ path: field, message: `nested more than ${MAX_BODY_DEPTH} levels deep` }]));
    });
    req.on('error', reject);
  });

const count = (s: SimState, tenant: string, key: string, field: keyof CounterSet): void => {
  const hash = keyHash(key);
  const t = s.counters.tenants[tenant] ?? { reads: 0, writes: 0, rateLimited: 0 };
  const k = s.counters.keys[hash] ?? { reads: 0, writes: 0, rateLimited: 0 };
  s.counters.tenants[tenant] = t;
  s.counters.keys[hash] = k;
  t[field]++;
  k[field]++;
  s.counters.total[field]++;
};

/** The openapi document, built once from depth-0 samples of the first tenant. */
export function openapiDoc(s: SimState): JsonObject {
  if (!s.openapi) {
    // Samples come from a tiny data set of the same seed, so the description never waits for a large one.
    const t = generateTenants({ seed: s.seed, tenants: 1, records: 2, keys: {} })[0];
    const samples: Partial<Record<CollectionSlug, JsonObject>> = {};
    if (t) {
      const ctx = shapeCtx(s, t, parseParams('depth=0', { maxLimit: s.maxLimit }));
      for (const c of COLLECTIONS) {
        const rec = t.collections[c].byId.values().next().value;
        if (rec) samples[c] = shapeDoc(c, rec.main, ctx, 0);
      }
    }
    s.openapi = buildOpenApi(s.routeSet, samples);
  }
  return s.openapi;
}

export const shapeCtx = (s: SimState, tenant: TenantData, params: SimParams): ShapeCtx => ({
  tenant,
  params,
  origin: s.origin,
});

/** The request handler: public routes, the API-key-guarded data routes, `/api` and media delivery. */
export async function handle(s: SimState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const raw = req.url ?? '/';
  const q = raw.indexOf('?');
  const pathname = q >= 0 ? raw.slice(0, q) : raw;
  const search = q >= 0 ? raw.slice(q + 1) : '';
  const method = (req.method ?? 'GET').toUpperCase();
  if (pathname === '/api' || pathname.startsWith('/api/')) {
    const auth = String(req.headers.authorization ?? '');
    if (/api-key/i.test(auth)) return send(res, 403, FORBIDDEN_API);
    return send(res, 403, { errors: [{ message: 'You are not allowed to perform this action.' }] });
  }
  if (pathname.startsWith('/media/') && method === 'GET') {
    const [, , tenant, file] = pathname.split('/');
    const t = s.tenants.find((x) => x.slug === tenant);
    if (t && file && t.collections.media.byId.has(decodeURIComponent(file)))
      return sendRaw(res, 200, PIXEL_PNG, 'image/png');
    return send(res, 404, { errors: [{ message: 'Not Found' }] });
  }
  if (pathname !== '/partners' && !pathname.startsWith('/partners/'))
    return send(res, 404, { errors: [{ message: 'Not Found' }] });
  const segs = pathname.split('/').slice(2).filter(Boolean).map(decodeURIComponent);
  if (method === 'GET' && segs.length === 1 && segs[0] === 'openapi') return send(res, 200, openapiDoc(s));
  if (method === 'GET' && segs[0] === 'docs' && segs.length <= 2) {
    if (segs.length === 1) return sendRaw(res, 200, swaggerHtml('/partners/openapi'), 'text/html; charset=utf-8');
    const asset = await swaggerAsset(segs[1] as string);
    if (asset) return sendRaw(res, 200, asset.body, asset.type);
    return send(res, 404, { errors: [{ message: 'Not Found' }] });
  }
  const version = segs[0];
  if (version !== API_VERSION)
    return send(res, 404, {
      errors: [{ message: `Unknown API version "${version ?? ''}"; the supported version is ${API_VERSION}` }],
    });
  if (segs.length === 2 && segs[1] === 'openapi' && method === 'GET') return send(res, 200, openapiDoc(s));
  if (segs.length < 3) return send(res, 404, { errors: [{ message: 'Not Found' }] });
  const tenantSlug = segs[1] as string;
  const rest = segs.slice(2);
  const logPath = raw;
  if (
    rest.length === 1 &&
    rest[0] === 'graphql' &&
    method === 'GET' &&
    String(req.headers.accept ?? '').includes('text/html') &&
    search === ''
  )
    return sendRaw(
      res,
      200,
      graphiqlHtml(`/partners/${API_VERSION}/${tenantSlug}/graphql`),
      'text/html; charset=utf-8',
    );

  // Preflight: answered without a key, like Payload's OPTIONS handler (CORS), and not counted as a data request.
  if (method === 'OPTIONS') {
    const allow = ['OPTIONS', ...allowedMethods(s, rest)].join(', ');
    res.writeHead(204, { allow, 'access-control-allow-methods': allow });
    res.end();
    return;
  }

  // A data request: hooks, faults, auth, rate limit, then the route.
  const n = ++s.dataRequests;
  let logTenant: string | undefined;
  res.on('close', () => {
    s.log.push({
      at: new Date(s.now()).toISOString(),
      method,
      path: logPath,
      status: res.headersSent ? res.statusCode : 0,
      ...(logTenant ? { tenant: logTenant } : {}),
    });
  });
  const auth = req.headers.authorization;
  const m = typeof auth === 'string' ? AUTH_RE.exec(auth) : null;
  const keyTenant = m ? s.tenants.find((t) => t.key === m[1]) : undefined;
  for (const hook of s.hooks)
    await hook({ method, path: pathname, n, ...(keyTenant ? { tenant: keyTenant.slug } : {}) });
  const taken = s.faults.take(method, raw);
  // `after: true`: the request is handled as usual and only its answer is replaced (see answerAfter).
  const after = taken?.after ? taken : undefined;
  const fault = after ? undefined : taken;
  let query = search;
  if (fault) {
    switch (fault.kind) {
      case 'latency':
        await new Promise((r) => setTimeout(r, fault.ms ?? 200));
        break;
      case 'reset':
        req.socket.destroy();
        return;
      case 'status': {
        const status = fault.status ?? 503;
        return send(res, status, {
          errors: [{ message: status >= 500 ? 'Service Unavailable' : `Injected ${status}` }],
        });
      }
      case 'malformed': {
        const text = '{"docs":[{"id":"';
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': text.length });
        res.end(text);
        return;
      }
      case 'stale-page':
        query = staleQuery(search);
        break;
      case 'huge':
        return sendHugeBody(res, Math.floor(fault.bytes ?? HUGE_DEFAULT_BYTES), fault.chunked === true);
      case 'rate-limit': {
        const secs = String(fault.retryAfterSeconds ?? 1);
        return send(
          res,
          429,
          { errors: [{ message: 'Too many requests' }] },
          {
            'retry-after': secs,
            'ratelimit-limit': '0',
            'ratelimit-remaining': '0',
            'ratelimit-reset': secs,
          },
        );
      }
    }
  }
  if (!keyTenant || keyTenant.slug !== tenantSlug) return send(res, 401, UNAUTHORIZED);
  const tenant = keyTenant;
  logTenant = tenant.slug;
  const kind = method === 'GET' || method === 'HEAD' ? 'read' : 'write';
  const decision = s.limiter.take(tenant.key, kind);
  if (!decision.allowed) {
    count(s, tenant.slug, tenant.key, 'rateLimited');
    return send(res, 429, { errors: [{ message: 'Too many requests' }] }, decision.headers);
  }
  count(s, tenant.slug, tenant.key, kind === 'read' ? 'reads' : 'writes');
  try {
    const { status, body } = await route(s, tenant, method, rest, query, req);
    if (after) return answerAfter(after, req.socket, res);
    // A stale cache in front of the upstream: always the first page, always "more to come".
    if (fault?.kind === 'stale-page' && isJsonObject(body) && Array.isArray(body.docs))
      Object.assign(body, { hasNextPage: true, nextPage: 2 });
    send(res, status, body, decision.headers);
  } catch (err) {
    if (after) return answerAfter(after, req.socket, res);
    if (err instanceof SimHttpError) {
      send(res, err.status, err.body(), { ...decision.headers, ...(err.headers ?? {}) });
    } else {
      send(res, 500, { errors: [{ message: 'Something went wrong.' }] }, decision.headers);
    }
  }
}

/** The query string without `where` and `page` (the `stale-page` fault: a cache that ignores them). */
const staleQuery = (search: string): string => {
  const params = new URLSearchParams(search);
  for (const k of [...params.keys()]) if (k === 'page' || k === 'where' || k.startsWith('where[')) params.delete(k);
  return params.toString();
};

async function route(
  s: SimState,
  tenant: TenantData,
  method: string,
  rest: string[],
  search: string,
  req: IncomingMessage,
): Promise<{ status: number; body: JsonValue }> {
  const head = rest[0] as string;
  const deps = { now: s.now, updatesOntoLatest: s.updatesOntoLatest };
  if (head === 'graphql' && rest.length === 1)
    throw new SimHttpError(501, 'GraphQL is not supported by the simulator; use the REST routes');
  if (!isCollectionSlug(head)) throw new SimHttpError(404, 'Route Not Found');
  const c: CollectionSlug = head;
  const served = routesFor(c, s.routeSet);
  const params = (): SimParams => parseParams(search, { maxLimit: s.maxLimit });
  const allowed = allowedMethods(s, rest);
  // HEAD is a GET whose body Node leaves out (the headers, content-length included, are the GET's).
  const verb = method === 'HEAD' ? 'GET' : method;
  if (rest.length === 1) {
    if (verb === 'GET' && served.includes('list'))
      return { status: 200, body: listDocs(c, shapeCtx(s, tenant, params())) };
    if (verb === 'POST' && served.includes('create')) {
      const p = params();
      const body = await readBody(req, c);
      const r = createDoc(deps, tenant, c, body, p);
      const ctx = shapeCtx(s, tenant, { ...p, draft: r.draft });
      return { status: 201, body: shapeDoc(c, r.stored, ctx, p.depth) };
    }
    if ((verb === 'PATCH' || verb === 'DELETE') && allowed.includes(verb)) {
      const body = verb === 'PATCH' ? await readBody(req, c) : undefined;
      return bulkByWhere(s, tenant, c, verb === 'PATCH' ? 'update' : 'delete', params(), body);
    }
    throw routeMissing(allowed);
  }
  if (rest.length === 2) {
    const second = rest[1] as string;
    const bulk = BULK_ROUTES.find((b) => b.collection === c && b.kind === second);
    if (bulk) {
      if (verb !== 'PATCH') throw routeMissing(allowed);
      const p = params();
      const body = await readBody(req, c);
      return { status: 200, body: bulkUpdate(deps, tenant, c, bulk.kind as BulkKind, body, p) };
    }
    const id = second;
    if (verb === 'GET' && served.includes('get'))
      return { status: 200, body: getDoc(c, id, shapeCtx(s, tenant, params())) };
    if ((verb === 'PUT' && served.includes('put')) || (verb === 'PATCH' && served.includes('patch'))) {
      const p = params();
      const body = await readBody(req, c);
      const r = updateDoc(deps, tenant, c, id, body, p, verb === 'PUT' ? 'put' : 'patch');
      return { status: 200, body: shapeDoc(c, r.stored, shapeCtx(s, tenant, { ...p, draft: r.draft }), p.depth) };
    }
    if (verb === 'DELETE' && served.includes('delete')) {
      const rec = tenant.collections[c].byId.get(id);
      if (!rec) throw notFound();
      const p = parseParams('', { maxLimit: s.maxLimit });
      const doc = shapeDoc(c, viewOf(rec, false), shapeCtx(s, tenant, p), p.depth);
      deleteDoc(tenant, c, id);
      // Payload's deleteByID handler: the record as it was, wrapped (`general:deletedSuccessfully`).
      return { status: 200, body: { doc, message: 'Deleted successfully.' } };
    }
    throw routeMissing(allowed);
  }
  if (
    rest.length === 3 &&
    rest[1] === 'theme-settings' &&
    rest[2] === 'schema' &&
    THEME_SCHEMA_COLLECTIONS.includes(c)
  ) {
    if (verb !== 'GET') throw routeMissing(allowed);
    return { status: 200, body: themeSettingsSchema(c) };
  }
  throw new SimHttpError(404, 'Route Not Found');
}

/** Runs a mutation through the simulator's own PRNG and clock. */
export function runMutation(s: SimState, spec: MutateSpec): MutateResult {
  const t = s.tenants.find((x) => x.slug === spec.tenant);
  if (!t) throw new UnderstudyError('US_VALIDATION', `unknown tenant "${spec.tenant}"`);
  if (!isCollectionSlug(spec.collection))
    throw new UnderstudyError('US_VALIDATION', `unknown collection "${String(spec.collection)}"`);
  return mutate(t, spec, s.mutatePrng, s.now(), () => ++s.mutationRev);
}

/** Records of a collection as a depth-0 read (published, or draft) returns them, in id order. */
export function docsOf(s: SimState, tenant: string, c: CollectionSlug, draft = false): readonly JsonObject[] {
  const t = s.tenants.find((x) => x.slug === tenant);
  if (!t) throw new UnderstudyError('US_VALIDATION', `unknown tenant "${tenant}"`);
  const p = parseParams(draft ? 'depth=0&draft=true' : 'depth=0', { maxLimit: s.maxLimit });
  const ctx = shapeCtx(s, t, p);
  return t.collections[c]
    .ordered('id', draft, { locale: 'en', fallback: 'en' })
    .map((r) => shapeDoc(c, viewOf(r, draft), ctx, 0));
}
