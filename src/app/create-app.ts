import type { Redis } from 'ioredis';
import { Agent } from 'undici';
import { type CloseStep, closeAll, closeOnce } from '../close-all.js';
import type { Config } from '../config/config-schema.js';
import { databasePath } from '../config/database-path.js';
import { type ResolvedTenant, resolveTenants } from '../config/resolve-tenants.js';
import { type FailureSpell, failureSpell } from '../failure-spell.js';
import type { Logger } from '../log.js';
import { instrumentGate } from '../ops/instrument-gate.js';
import type { OpsMetrics } from '../ops/metrics.js';
import { reserveAtGate, throughGate } from '../partners/gate-layer.js';
import type { Parking } from '../partners/gate-parking.js';
import { httpTransport, partnersAgentOptions } from '../partners/http-transport.js';
import { keyHash } from '../partners/key-hash.js';
import { createMemoryRateGate } from '../partners/memory-rate-gate.js';
import { parseAnswers } from '../partners/parse-answer.js';
import type { PartnersClient } from '../partners/partners-client.js';
import { partnersRoutes } from '../partners/partners-routes.js';
import type { RateBudget, RateGate } from '../partners/rate-gate.js';
import { reportRequests } from '../partners/request-report.js';
import { capResponseSize } from '../partners/response-size-cap.js';
import { type RetryTiming, retryRequests } from '../partners/retry-requests.js';
import { createRedisRateGate } from '../queue/redis-rate-gate.js';
import { DEFAULT_REDIS_START_TIMEOUT_MS, firstReady, longLivedRedis, redisSettings } from '../queue/redis-settings.js';
import { connectSharedBudget, redisConfigured } from '../queue/shared-budget.js';
import type { MirrorHealth } from '../store/mirror-health.js';
import { type Mirror, openMirror } from '../store/open-mirror.js';
import { discoverRoutes, type ReadRoutes } from '../sync/discover-routes.js';
import type { Store } from '../sync/store-port.js';
import type { SyncDeps } from '../sync/sync-run.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import type { TenantSlug } from '../vocabulary/ids.js';
import type { WriteLog } from '../writes/write-log.js';
import { appSyncDeps, type SyncDepsOptions } from './app-sync-deps.js';
import {
  createMirrorApp,
  createQueueApp,
  createReaderApp,
  type MirrorApp,
  type MirrorDeps,
  type QueueApp,
  type QueueDeps,
  type ReaderApp,
  type ReaderDeps,
} from './command-app.js';

export type { MirrorApp, MirrorDeps, QueueApp, QueueDeps, ReaderApp, ReaderDeps } from './command-app.js';

/**
 * What a process opens, by what it does (docs/architecture.md):
 * - `worker` (`understudy worker`): the mirror (created and migrated when needed), the one HTTP pool, each key's
 *   rate gate in Redis, and the Redis connection;
 * - `sync` (inline `sync`, each `sync --schedule` tick; the default): the same, with the keys' budgets shared in
 *   Redis when Redis is configured (it must answer) and in the process otherwise;
 * - `reader` (`status`, `backup`): the mirror read-only, which must exist, and Redis only when asked for;
 * - `queue` (`enqueue`, `sync --enqueue`, `writes`, `webhooks`, `serve`): Redis, and the mirror only when asked
 *   for, read-only (`writes retry` opens an existing one writable, for its write log; serve its reads);
 * - `mirror` (`webhooks enable`): the queue profile's mirror, without Redis.
 * The `reader`, `queue` and `mirror` profiles never create the mirror.
 */
export type AppProfile = 'worker' | 'sync' | ReaderDeps['profile'] | QueueDeps['profile'] | MirrorDeps['profile'];

/** Builds the rate gate for one API key; one gate per key, shared by every tenant that uses that key. */
export type GateFactory = (keyHash: string, budget: RateBudget) => RateGate;

/** What every part of the process (sync, writes, commands) knows of one tenant: built once per config. */
export interface TenantSettings {
  readonly resolved: ResolvedTenant;
  /** The tenant's client: its key, its key's shared rate gate, the process' one HTTP pool. */
  readonly client: PartnersClient;
  /** What sync mirrors of the tenant (the same for a scheduled sync and the sync after a bulk write). */
  readonly target: {
    readonly slug: TenantSlug;
    readonly drafts: boolean;
    readonly collections?: readonly CollectionSlug[];
    readonly locales?: readonly string[];
  };
}

export interface AppDeps {
  /** Default `sync`. */
  readonly profile?: 'worker' | 'sync';
  readonly log: Logger;
  /** Operations (issue 6): upstream requests and rate-gate waits are reported here. */
  readonly metrics?: OpsMetrics;
  /** The mirror file; default the config's (`UNDERSTUDY_DB`, config `database`). */
  readonly database?: string;
  /** Only these tenants (`--tenant`); default all. */
  readonly tenants?: readonly string[];
  /**
   * Where each key's rate gate lives. `redis`: open the process' Redis connection (REDIS_URL, else config
   * `redis.url`) and keep the gates in it, shared with every process using the key (default of `worker`).
   * `shared`: the same when Redis is configured, and then it must answer within 3 s (`US_REDIS`), else in-process
   * gates (default of `sync`). `memory`: in-process gates, no Redis (`sync --local-budget`).
   */
  readonly gates?: 'memory' | 'redis' | 'shared';
  /** Builds the gates instead (a command sharing the workers' budget, a benchmark); wrapped like the others. */
  readonly gateFor?: GateFactory;
  /** Retry timing of every client (tests shorten it); default the client's own (a 250 ms floor, growing). */
  readonly retry?: RetryTiming;
  /** A stop asked for while the app is built: ends the first wait for Redis (`worker.redisStartTimeoutMs`). */
  readonly signal?: AbortSignal;
}

/** Every resource of one process, built once; the long-running parts (src/app/start-*.ts) take it. */
export interface App extends AsyncDisposable {
  readonly log: Logger;
  readonly metrics: OpsMetrics | null;
  /** The config and environment last applied (at start, then by each `reload`). */
  readonly config: Config;
  readonly env: NodeJS.ProcessEnv;
  readonly databasePath: string;
  /** The store, the write log and the health queries share one SQLite connection. */
  readonly store: Store;
  readonly writeLog: WriteLog;
  readonly health: MirrorHealth;
  /** The change log and the self-check's store, on the same connection. */
  readonly changes: Mirror['changes'];
  /** What watch keeps in the mirror (owners, status) and the live rows it compares, on the same connection. */
  readonly watch: Mirror['watch'];
  /**
   * Aborts when the process is asked to stop (AppDeps `signal`; never without one). With Redis unreachable then,
   * its connection ends at once (src/queue/redis-at-stop.ts) and the workers close without it.
   */
  readonly stopping: AbortSignal;
  /** The Redis connection (gates in Redis only) and the key prefix. */
  readonly redis: Redis | null;
  readonly prefix: string;
  /** HTTP pools (undici Agents) this app opened for the partners clients: one (the worker logs it at start). */
  readonly httpPools: number;
  /** The tenants' settings, by slug (replaced as a whole on reload). */
  tenants(): readonly TenantSettings[];
  tenant(slug: string): TenantSettings | null;
  /** A client for `tenant` over the app's gates and pool (the commands that resolve their own tenants). */
  clientFor(tenant: ResolvedTenant): PartnersClient;
  /**
   * The tenant's read routes, discovered once (its requests under the first asker's `parking`) and reused for
   * `ROUTES_TTL_MS`; a failed discovery is not kept.
   */
  routesOf(slug: string, signal: AbortSignal, parking?: Parking): Promise<ReadRoutes>;
  /**
   * The sync deps of a run on `client` (a worker's job, a watch turn, an inline sync, a check's repair): the one
   * builder (`app-sync-deps.ts`), which reads the config's sync tuning.
   */
  syncDeps(client: PartnersClient, opts?: SyncDepsOptions | AbortSignal): SyncDeps;
  /** Every key's gate with its window (a Redis that lost its data holds them all for one window). */
  gates(): readonly { readonly gate: RateGate; readonly windowMs: number }[];
  /**
   * The one reload path (SIGHUP): re-resolves the tenants with their current keys, rebuilds their clients, empties
   * the route cache, then runs each `onReload` listener in order. Work already running keeps the client it has.
   */
  reload(config: Config, env: NodeJS.ProcessEnv): Promise<void>;
  onReload(listener: (app: App) => void | Promise<void>): void;
  /** Closes the gates, the HTTP pool, the database and Redis, in that order. Idempotent. */
  close(): Promise<void>;
}

/** How long a tenant's discovered routes are reused. */
export const ROUTES_TTL_MS = 10 * 60_000;

/**
 * The composition root: the only place that opens the database, the HTTP pool, the rate gates and (for the
 * worker) Redis. Closing runs every step even when one fails, in reverse order of construction.
 */
export function createApp(config: Config | null, env: NodeJS.ProcessEnv, deps: ReaderDeps): Promise<ReaderApp>;
export function createApp(config: Config | null, env: NodeJS.ProcessEnv, deps: QueueDeps): Promise<QueueApp>;
export function createApp(config: Config | null, env: NodeJS.ProcessEnv, deps: MirrorDeps): Promise<MirrorApp>;
export function createApp(config: Config, env: NodeJS.ProcessEnv, deps: AppDeps): Promise<App>;
export function createApp(
  config: Config | null,
  env: NodeJS.ProcessEnv,
  deps: AppDeps | ReaderDeps | QueueDeps | MirrorDeps,
): Promise<App | ReaderApp | QueueApp | MirrorApp> {
  if (deps.profile === 'reader') return createReaderApp(config, env, deps);
  if (deps.profile === 'queue') return createQueueApp(config, env, deps);
  if (deps.profile === 'mirror') return createMirrorApp(config, env, deps);
  if (!config) return Promise.reject(new TypeError(`createApp: the ${deps.profile ?? 'sync'} profile needs a config`));
  return createProcessApp(config, env, deps);
}

/** The process' Redis connection when its profile keeps the gates there (closed last but the mirror's). */
async function openGateRedis(
  config: Config,
  env: NodeJS.ProcessEnv,
  deps: AppDeps,
  steps: CloseStep[],
): Promise<Redis | null> {
  const { log } = deps;
  const { url } = redisSettings(config, env);
  const gatesIn = deps.gates ?? (deps.profile === 'worker' ? 'redis' : 'shared');
  if (gatesIn === 'memory' || (gatesIn === 'shared' && !redisConfigured(config, env))) return null;
  const r =
    gatesIn === 'redis'
      ? longLivedRedis(url, log, 'commands', deps.signal)
      : await connectSharedBudget(url, log, deps.signal);
  steps.push(async () => {
    // QUIT would wait for a Redis that is down; only a ready connection says goodbye.
    if (r.status === 'ready') await r.quit().catch(() => r.disconnect());
    else r.disconnect();
  });
  if (gatesIn === 'redis')
    await firstReady(r, url, config.worker?.redisStartTimeoutMs ?? DEFAULT_REDIS_START_TIMEOUT_MS, deps.signal);
  return r;
}

/**
 * One gate per key hash, wrapped here and nowhere else: instrumented (metrics). Beside it, the key's spell of
 * upstream failures (src/failure-spell.ts), so that the clients of every tenant on the key say an outage once
 * between them, and a reload's new clients carry on the spell. Closing closes every gate.
 */
function keyGates(deps: AppDeps, redis: Redis | null, prefix: string, metrics: OpsMetrics | null) {
  const gates = new Map<string, { gate: RateGate; windowMs: number; spell: FailureSpell }>();
  const baseGate: GateFactory =
    deps.gateFor ??
    (redis
      ? (hash, budget) =>
          createRedisRateGate({
            redis,
            keyHash: hash,
            budget,
            prefix,
            ...(deps.signal ? { stopping: deps.signal } : {}),
          })
      : (_hash, budget) => createMemoryRateGate(budget));
  const keyOf = (tenant: ResolvedTenant): { readonly gate: RateGate; readonly spell: FailureSpell } => {
    const hash = keyHash(tenant.apiKey);
    let entry = gates.get(hash);
    if (!entry) {
      const gate = baseGate(hash, tenant.budget);
      const windowMs = tenant.budget.windowMs;
      entry = { gate: metrics ? instrumentGate(gate, metrics) : gate, windowMs, spell: failureSpell() };
      gates.set(hash, entry);
    }
    return entry;
  };
  const close = () =>
    closeAll(
      [...gates.values()].map(
        ({ gate }) =>
          () =>
            gate.close(),
      ),
      'the rate gates',
    );
  return { keyOf, all: () => [...gates.values()], close };
}

/** What the partners clients are built with: the one pool, the key gates and spells, the config in force. */
interface ClientParts {
  readonly deps: AppDeps;
  readonly agent: Agent;
  readonly keyOf: (tenant: ResolvedTenant) => { readonly gate: RateGate; readonly spell: FailureSpell };
  readonly current: { readonly config: Config };
  readonly metrics: OpsMetrics | null;
}

/**
 * A tenant's partners client over the app's pool and its key's gate: the route table over the client's layers,
 * innermost first (undici's interceptors, as functions).
 */
function partnersClientFor(p: ClientParts, tenant: ResolvedTenant): PartnersClient {
  const { deps, agent, current, metrics } = p;
  const { gate, spell } = p.keyOf(tenant);
  const onRequest = metrics?.upstreamRequest;
  const sent = httpTransport({ baseUrl: current.config.baseUrl, apiKey: tenant.apiKey, dispatcher: agent });
  const read = capResponseSize(current.config.maxResponseBytes)(sent);
  const timed = reportRequests(onRequest && ((e) => onRequest({ tenant: tenant.slug, ...e })))(read);
  const decoded = parseAnswers({ secret: tenant.apiKey })(throughGate(gate)(timed));
  const log = deps.log.child({ tenant: tenant.slug });
  const send = retryRequests({ ...deps.retry, log, spell, pauseKey: (ms) => gate.pause(ms) })(decoded);
  return partnersRoutes(tenant.slug, send, reserveAtGate(gate));
}

/** What every part knows of a tenant: its client and its sync target. */
const settingsOf = (t: ResolvedTenant, client: PartnersClient): TenantSettings => ({
  resolved: t,
  client,
  target: {
    slug: t.slug,
    drafts: t.drafts,
    ...(t.collections ? { collections: t.collections } : {}),
    ...(t.locales ? { locales: t.locales } : {}),
  },
});

/** Route discovery costs requests; each tenant's answer is reused for `ROUTES_TTL_MS`, a failed one dropped. */
function routeCache(clientOf: (slug: string) => PartnersClient | null) {
  const cache = new Map<string, { at: number; routes: Promise<ReadRoutes> }>();
  const routesOf = (slug: string, signal: AbortSignal, parking?: Parking): Promise<ReadRoutes> => {
    const hit = cache.get(slug);
    if (hit && Date.now() - hit.at < ROUTES_TTL_MS) return hit.routes;
    const client = clientOf(slug);
    if (!client) return Promise.reject(new Error(`tenant ${slug} has no client`));
    const routes = discoverRoutes(client, { signal, ...(parking ? { parking } : {}) });
    routes.catch(() => {
      if (cache.get(slug)?.routes === routes) cache.delete(slug);
    });
    cache.set(slug, { at: Date.now(), routes });
    return routes;
  };
  return { routesOf, clear: () => cache.clear() };
}

/** The tenants' settings by slug, replaced as a whole (a reload); each tenant's client built once per config. */
function tenantTable(resolved: readonly ResolvedTenant[], clientFor: (t: ResolvedTenant) => PartnersClient) {
  const build = (list: readonly ResolvedTenant[]) =>
    new Map(list.map((t) => [t.slug as string, settingsOf(t, clientFor(t))]));
  let tenants = build(resolved);
  return {
    all: () => [...tenants.values()],
    get: (slug: string) => tenants.get(slug) ?? null,
    replace(list: readonly ResolvedTenant[]) {
      tenants = build(list);
    },
  };
}

/** Runs every listener in order, even when one fails; throws the first failure after. */
async function runListeners(listeners: readonly ((app: App) => void | Promise<void>)[], app: App): Promise<void> {
  let failure: unknown = null;
  for (const listener of listeners) {
    try {
      await listener(app);
    } catch (err) {
      failure ??= err;
    }
  }
  if (failure) throw failure;
}

/** Opens a process' resources in order (Redis, the mirror, the one HTTP pool, the gates), each close step kept. */
async function openResources(config: Config, env: NodeJS.ProcessEnv, deps: AppDeps, steps: CloseStep[]) {
  const redis = await openGateRedis(config, env, deps, steps);
  const mirror = await openMirror(deps.database ?? databasePath(config, env));
  steps.push(() => mirror.close());
  const agent = new Agent(partnersAgentOptions());
  steps.push(() => agent.close());
  const gates = keyGates(deps, redis, redisSettings(config, env).prefix, deps.metrics ?? null);
  steps.push(gates.close);
  return { redis, mirror, agent, gates };
}

async function createProcessApp(config: Config, env: NodeJS.ProcessEnv, deps: AppDeps): Promise<App> {
  const metrics = deps.metrics ?? null;
  const database = deps.database ?? databasePath(config, env);
  const resolved = resolveTenants(config, env, deps.tenants);
  const { prefix } = redisSettings(config, env);
  const steps: CloseStep[] = [];
  const closeSteps = () => closeAll([...steps].reverse(), 'understudy');
  try {
    const { redis, mirror, agent, gates } = await openResources(config, env, deps, steps);
    const current = { config, env };
    const clients: ClientParts = { deps, agent, keyOf: gates.keyOf, current, metrics };
    const clientFor = (t: ResolvedTenant) => partnersClientFor(clients, t);
    const tenants = tenantTable(resolved, clientFor);
    const routes = routeCache((slug) => tenants.get(slug)?.client ?? null);
    const listeners: ((app: App) => void | Promise<void>)[] = [];
    const close = closeOnce(closeSteps);
    const app: App = {
      log: deps.log,
      metrics,
      get config() {
        return current.config;
      },
      get env() {
        return current.env;
      },
      databasePath: database,
      store: mirror.store,
      writeLog: mirror.writeLog,
      health: mirror.health,
      changes: mirror.changes,
      watch: mirror.watch,
      stopping: deps.signal ?? new AbortController().signal,
      redis,
      prefix,
      httpPools: 1,
      tenants: tenants.all,
      tenant: tenants.get,
      clientFor,
      routesOf: routes.routesOf,
      syncDeps: (client, opts) => appSyncDeps(app, client, opts),
      gates: gates.all,
      async reload(next, nextEnv) {
        const nextTenants = resolveTenants(next, nextEnv, deps.tenants);
        current.config = next;
        current.env = nextEnv;
        tenants.replace(nextTenants);
        routes.clear();
        // Every listener runs even when one fails (writes reload at once; schedules wait on Redis).
        await runListeners(listeners, app);
      },
      onReload(listener) {
        listeners.push(listener);
      },
      close,
      [Symbol.asyncDispose]: close,
    };
    return app;
  } catch (err) {
    await closeSteps().catch(() => undefined);
    throw err;
  }
}
