import { createHash } from 'node:crypto';
import type { RouteSet } from '../vocabulary/collections.js';
import type { JsonObject } from '../vocabulary/ids.js';
import type { SimParams } from './parse-params.js';
import type { Prng } from './prng.js';
import type { TenantData } from './sim-db.js';
import type { FaultQueue } from './sim-faults.js';
import type { RollingLimiter } from './sim-rate-limit.js';
import type { ShapeCtx } from './sim-shape.js';

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

/** One running simulator's state: created by `startSimulator`, held by its server and its controls only. */
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

export const keyHash = (key: string): string => createHash('sha256').update(key).digest('hex').slice(0, 12);

/** Counts one request of a tenant's key: by tenant, by key hash and in total. */
export const countRequest = (s: SimState, tenant: string, key: string, field: keyof CounterSet): void => {
  const hash = keyHash(key);
  const t = s.counters.tenants[tenant] ?? { reads: 0, writes: 0, rateLimited: 0 };
  const k = s.counters.keys[hash] ?? { reads: 0, writes: 0, rateLimited: 0 };
  s.counters.tenants[tenant] = t;
  s.counters.keys[hash] = k;
  t[field]++;
  k[field]++;
  s.counters.total[field]++;
};

export const shapeCtx = (s: SimState, tenant: TenantData, params: SimParams): ShapeCtx => ({
  tenant,
  params,
  origin: s.origin,
});
