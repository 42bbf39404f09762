import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UnderstudyError } from '../errors.js';
import { COLLECTIONS, type CollectionSlug, isCollectionSlug, type RouteSet } from '../vocabulary/collections.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../vocabulary/ids.js';
import { Prng } from './prng.js';
import { generateTenants } from './sim-db.js';
import { FaultQueue, type FaultSpec } from './sim-faults.js';
import type { MutateResult, MutateSpec } from './sim-mutate.js';
import { type RateLimits, RollingLimiter } from './sim-rate-limit.js';
import {
  type BeforeRequestHook,
  docsOf,
  emptyCounters,
  handle,
  type RequestLogEntry,
  runMutation,
  type SimCounters,
  type SimState,
} from './sim-server.js';

export interface SimulatorOptions {
  /** Default 0 (a free port). */
  port?: number;
  /** Default '127.0.0.1'. */
  host?: string;
  /** Default 1. */
  seed?: number;
  /** Default 2. */
  tenants?: number;
  /** Scale per collection, default 40 (event instances get 3x, seasons and blogs 1/4, venues 1/2). */
  records?: number;
  /** Default 'full'. */
  routes?: RouteSet;
  /** Reads per window per key, default 100; 0 or Infinity = no limit. */
  readLimit?: number;
  /** Writes per window per key, default 20; 0 or Infinity = no limit. */
  writeLimit?: number;
  /** Default 60000. */
  windowMs?: number;
  /** Default 100: larger `limit`s clamp silently and the envelope reports the clamped value. */
  maxLimit?: number;
  /** Tenant slug -> key override. */
  keys?: Record<string, string>;
  /**
   * An instant of the day generated dates are placed around (performances from about 150 days before to 330 after);
   * default 2026-01-15. The data depend on its UTC day only, so a seed and a day always give the same data.
   */
  aroundDay?: number;
  /**
   * Default false (the spec: an update without `draft=true` addresses the published version). True: updates as
   * Payload 3 applies them, onto the latest version, a pending draft included, keeping its `_status` unless the
   * body sets one (a published record with a pending draft comes out unpublished, holding the draft's content).
   */
  updatesOntoLatest?: boolean;
}

export interface SimTenant {
  slug: string;
  key: string;
}

export interface MutatorSpec {
  tenant: string;
  /** Default: every collection but custom-attributes, in turn. */
  collection?: CollectionSlug;
  /** Ticks per second. */
  perSecond: number;
  /** Per tick; default 0 creates, 1 edit, 0 deletes. */
  creates?: number;
  edits?: number;
  deletes?: number;
  sameUpdatedAt?: boolean;
}

export interface SimControls {
  /** The next `count` matching data requests get the fault. */
  injectFaults(spec: FaultSpec): void;
  clearFaults(): void;
  /** Runs before each data request is handled (awaited); returns an unsubscribe function. */
  beforeRequest(hook: BeforeRequestHook): () => void;
  /** Deterministic creates, edits and deletes (see docs/simulator.md). */
  mutate(spec: MutateSpec): MutateResult;
  startMutator(spec: MutatorSpec): void;
  stopMutator(): void;
  counters(): SimCounters;
  requestLog(): RequestLogEntry[];
  /** Clears faults, counters, the request log and the rate-limit windows (not the data). */
  reset(): void;
  setRateLimits(limits: Partial<RateLimits>): void;
  /**
   * Records of a collection as a published `?depth=0` read returns them (never-published ones left out), in id
   * order; with `{ draft: true }`, as a `draft=true` read does (every record, newest draft where one exists).
   */
  docs(tenant: string, collection: CollectionSlug, opts?: { readonly draft?: boolean }): readonly JsonObject[];
}

export interface Simulator {
  /** Origin, e.g. http://127.0.0.1:41234 (the API is at `${url}/partners/...`). */
  url: string;
  tenants: SimTenant[];
  controls: SimControls;
  /** Closes all sockets (keep-alive too) and stops the mutator; idempotent. */
  close(): Promise<void>;
}

export type { BeforeRequestHook, FaultSpec, MutateResult, MutateSpec, RateLimits, RequestLogEntry, SimCounters };

const limitOf = (n: number | undefined, dflt: number): number => (n === undefined ? dflt : n);

/** Starts the Partners API simulator on a port of its own. */
export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const seed = opts.seed ?? 1;
  const tenants = generateTenants({
    seed,
    tenants: opts.tenants ?? 2,
    records: opts.records ?? 40,
    keys: opts.keys ?? {},
    ...(opts.aroundDay !== undefined ? { dayMs: opts.aroundDay } : {}),
  });
  const now = (): number => Date.now();
  // Small data sets are built now; large ones on each tenant's first request (see docs/simulator.md).
  if ((opts.records ?? 40) <= 2000) for (const t of tenants) t.prepare();
  const state: SimState = {
    tenants,
    seed,
    routeSet: opts.routes ?? 'full',
    maxLimit: opts.maxLimit ?? 100,
    limiter: new RollingLimiter(
      {
        readLimit: limitOf(opts.readLimit, 100),
        writeLimit: limitOf(opts.writeLimit, 20),
        windowMs: opts.windowMs ?? 60_000,
      },
      now,
    ),
    faults: new FaultQueue(),
    hooks: new Set(),
    log: [],
    counters: emptyCounters(),
    dataRequests: 0,
    origin: '',
    now,
    updatesOntoLatest: opts.updatesOntoLatest === true,
    mutatePrng: new Prng(seed ^ 0x5eed),
    mutationRev: 0,
    openapi: undefined,
  };

  let mutator: NodeJS.Timeout | undefined;
  const controls: SimControls = {
    injectFaults: (spec) => state.faults.add(spec),
    clearFaults: () => state.faults.clear(),
    beforeRequest: (hook) => {
      state.hooks.add(hook);
      return () => {
        state.hooks.delete(hook);
      };
    },
    mutate: (spec) => runMutation(state, spec),
    startMutator: (spec) => {
      controls.stopMutator();
      if (!(spec.perSecond > 0)) throw new UnderstudyError('US_VALIDATION', 'perSecond must be a positive number');
      const cycle = COLLECTIONS.filter((c) => c !== 'custom-attributes');
      let tick = 0;
      mutator = setInterval(
        () => {
          const collection = spec.collection ?? (cycle[tick % cycle.length] as CollectionSlug);
          tick++;
          runMutation(state, {
            tenant: spec.tenant,
            collection,
            creates: spec.creates ?? 0,
            edits: spec.edits ?? 1,
            deletes: spec.deletes ?? 0,
            ...(spec.sameUpdatedAt ? { sameUpdatedAt: true } : {}),
          });
        },
        Math.max(1, Math.round(1000 / spec.perSecond)),
      );
      mutator.unref();
    },
    stopMutator: () => {
      if (mutator) clearInterval(mutator);
      mutator = undefined;
    },
    counters: () => structuredClone(state.counters),
    requestLog: () => [...state.log],
    reset: () => {
      state.faults.clear();
      state.counters = emptyCounters();
      state.log.length = 0;
      state.limiter.reset();
    },
    setRateLimits: (l) => {
      state.limiter.limits = { ...state.limiter.limits, ...l };
    },
    docs: (tenant, collection, opts) => docsOf(state, tenant, collection, opts?.draft ?? false),
  };

  const server = createServer({ keepAlive: true }, (req, res) => {
    const url = req.url ?? '/';
    const p = url.startsWith('/__sim/') ? admin(controls, state, req, res) : handle(state, req, res);
    p.catch(() => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{"errors":[{"message":"Something went wrong."}]}');
      } else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    // A port in use or a host that is not ours: an UnderstudyError, as every error of the public API.
    const refused = (err: Error) =>
      reject(
        new UnderstudyError(
          'US_CONFIG',
          `simulator: cannot listen on ${opts.host ?? '127.0.0.1'}:${opts.port ?? 0}: ${err.message}`,
          {
            cause: err,
          },
        ),
      );
    server.once('error', refused);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => {
      server.off('error', refused);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  state.origin = `http://${host}:${addr.port}`;

  let closing: Promise<void> | undefined;
  return {
    url: state.origin,
    tenants: tenants.map((t) => ({ slug: t.slug, key: t.key })),
    controls,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        controls.stopMutator();
        state.hooks.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

const readJson = (req: IncomingMessage): Promise<JsonValue | undefined> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8').trim();
      if (!text) return resolve(undefined);
      try {
        resolve(JSON.parse(text) as JsonValue);
      } catch (err) {
        reject(err);
      }
    });
    req.on('error', reject);
  });

const reply = (res: ServerResponse, status: number, body: unknown): void => {
  const text = JSON.stringify(body ?? null);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
};

/** The HTTP mirror of the controls, under `/__sim/` (no auth, no rate limit). */
async function admin(controls: SimControls, state: SimState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const [pathname = ''] = (req.url ?? '').split('?');
  const segs = pathname.split('/').filter(Boolean).slice(1).map(decodeURIComponent);
  const method = req.method ?? 'GET';
  let body: JsonValue | undefined;
  try {
    body = await readJson(req);
  } catch {
    return reply(res, 400, { errors: [{ message: 'The request body is not valid JSON' }] });
  }
  const obj = (isJsonObject(body as JsonValue) ? body : {}) as JsonObject;
  try {
    const route = `${method} ${segs.join('/')}`;
    switch (route) {
      case 'POST faults':
        for (const spec of Array.isArray(body) ? body : [obj]) controls.injectFaults(spec as unknown as FaultSpec);
        return reply(res, 200, { pending: state.faults.pending() });
      case 'DELETE faults':
        controls.clearFaults();
        return reply(res, 200, { pending: 0 });
      case 'GET faults':
        return reply(res, 200, { pending: state.faults.pending() });
      case 'POST mutate':
        return reply(res, 200, controls.mutate(obj as unknown as MutateSpec));
      case 'POST mutator/start':
        controls.startMutator(obj as unknown as MutatorSpec);
        return reply(res, 200, { running: true });
      case 'POST mutator/stop':
        controls.stopMutator();
        return reply(res, 200, { running: false });
      case 'GET counters':
        return reply(res, 200, controls.counters());
      case 'GET request-log':
        return reply(res, 200, controls.requestLog());
      case 'POST reset':
        controls.reset();
        return reply(res, 200, { ok: true });
      case 'PUT rate-limits':
      case 'POST rate-limits':
        controls.setRateLimits(obj as Partial<RateLimits>);
        return reply(res, 200, state.limiter.limits);
      case 'GET tenants':
        return reply(
          res,
          200,
          state.tenants.map((t) => ({ slug: t.slug })),
        );
    }
    if (method === 'GET' && segs[0] === 'docs' && segs.length === 3) {
      const c = segs[2] as string;
      if (!isCollectionSlug(c)) return reply(res, 404, { errors: [{ message: `unknown collection ${c}` }] });
      return reply(res, 200, controls.docs(segs[1] as string, c, { draft: /[?&]draft=true(&|$)/.test(req.url ?? '') }));
    }
    return reply(res, 404, { errors: [{ message: 'Unknown admin route' }] });
  } catch (err) {
    return reply(res, 400, { errors: [{ message: (err as Error).message }] });
  }
}
