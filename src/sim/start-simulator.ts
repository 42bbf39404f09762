import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeOnce } from '../close-all.js';
import { UnderstudyError } from '../errors.js';
import type { RouteSet } from '../vocabulary/collections.js';
import { Prng } from './prng.js';
import { admin } from './sim-admin-routes.js';
import { createControls, type MutatorSlot, type MutatorSpec, type SimControls } from './sim-controls.js';
import { generateTenants } from './sim-db.js';
import { FaultQueue, type FaultSpec } from './sim-faults.js';
import type { MutateResult, MutateSpec } from './sim-mutate.js';
import { type RateLimits, RollingLimiter } from './sim-rate-limit.js';
import { handle } from './sim-server.js';
import {
  type BeforeRequestHook,
  emptyCounters,
  type RequestLogEntry,
  type SimCounters,
  type SimState,
} from './sim-state.js';

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

export interface Simulator {
  /** Origin, e.g. http://127.0.0.1:41234 (the API is at `${url}/partners/...`). */
  url: string;
  tenants: SimTenant[];
  controls: SimControls;
  /** Closes all sockets (keep-alive too) and stops the mutator; idempotent. */
  close(): Promise<void>;
}

export type {
  BeforeRequestHook,
  FaultSpec,
  MutateResult,
  MutateSpec,
  MutatorSpec,
  RateLimits,
  RequestLogEntry,
  SimControls,
  SimCounters,
};

const limitOf = (n: number | undefined, dflt: number): number => (n === undefined ? dflt : n);

/** A fresh simulator state for the options: generated tenants, limits, an empty fault queue and log. */
function createState(opts: SimulatorOptions): SimState {
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
  const limits = {
    readLimit: limitOf(opts.readLimit, 100),
    writeLimit: limitOf(opts.writeLimit, 20),
    windowMs: opts.windowMs ?? 60_000,
  };
  return {
    tenants,
    seed,
    routeSet: opts.routes ?? 'full',
    maxLimit: opts.maxLimit ?? 100,
    limiter: new RollingLimiter(limits, now),
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
}

/** The HTTP server: control routes under `/__sim/`, everything else through the request handler. */
const createSimServer = (state: SimState, controls: SimControls): Server =>
  createServer({ keepAlive: true }, (req, res) => {
    const url = req.url ?? '/';
    const p = url.startsWith('/__sim/') ? admin(controls, state, req, res) : handle(state, req, res);
    p.catch(() => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{"errors":[{"message":"Something went wrong."}]}');
      } else res.destroy();
    });
  });

/** Listens on the host and port; a port in use or a host that is not ours is an UnderstudyError, as every error of the public API. */
const listen = (server: Server, host: string, port: number): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    const refused = (err: Error) =>
      reject(
        new UnderstudyError('US_CONFIG', `simulator: cannot listen on ${host}:${port}: ${err.message}`, {
          cause: err,
        }),
      );
    server.once('error', refused);
    server.listen(port, host, () => {
      server.off('error', refused);
      resolve();
    });
  });

const originOf = (server: Server): string => {
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return `http://${host}:${addr.port}`;
};

/** Starts the Partners API simulator on a port of its own. */
export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const state = createState(opts);
  const mutator: MutatorSlot = { timer: undefined };
  const controls = createControls(state, mutator);
  const server = createSimServer(state, controls);
  await listen(server, opts.host ?? '127.0.0.1', opts.port ?? 0);
  state.origin = originOf(server);
  return {
    url: state.origin,
    tenants: state.tenants.map((t) => ({ slug: t.slug, key: t.key })),
    controls,
    close: closeOnce(
      () =>
        new Promise<void>((resolve) => {
          controls.stopMutator();
          state.hooks.clear();
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    ),
  };
}
