import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import { closeAll, closeOnce } from '../close-all.js';
import type { Config } from '../config/config-schema.js';
import type { Logger } from '../log.js';
import { watchSighup } from '../ops/config-reload.js';
import { type OpsServer, startOpsServer } from '../ops/http-server.js';
import { createOpsMetrics } from '../ops/metrics.js';
import { redisCheck, runChecks } from '../ops/readiness.js';
import { errorsFailTheCalls } from '../queue/error-listeners.js';
import { createRecordOrder } from '../queue/redis-record-order.js';
import { serveProcessesKey } from '../queue/serve-processes.js';
import { createWriteQueue, isPendingJob, openWritesQueue } from '../queue/write-queue.js';
import { mountReadRoutes } from '../serve/read-routes.js';
import { serveApp } from '../serve/serve-app.js';
import type { ServeContext, ServeEnv } from '../serve/serve-context.js';
import { type ServeMetrics, serveMetrics } from '../serve/serve-metrics.js';
import { resolveServeTokens, type ServeToken } from '../serve/serve-tokens.js';
import { tokenRateLimit } from '../serve/token-rate-limit.js';
import { wallClock } from '../sync/schedule-clock.js';
import { tenantSlug } from '../vocabulary/ids.js';
import { DEFAULT_MAX_BODY_BYTES } from '../writes/validate-write.js';
import { createApp } from './create-app.js';

export interface StartServeOptions {
  readonly config: Config;
  /** The file SIGHUP re-reads. */
  readonly configPath: string;
  readonly env: NodeJS.ProcessEnv;
  readonly log: Logger;
  /** Default 8080; 0 picks a free port. */
  readonly port?: number;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** `/healthz`, `/readyz`, `/metrics` on this port (`--http`); absent: none. */
  readonly opsPort?: number;
  readonly opsHost?: string;
  /** Routes of other parts mounted on the app (the description, the reads). */
  readonly extraRoutes?: readonly ((app: Hono<ServeEnv>, ctx: ServeContext) => void)[];
}

export interface RunningServe {
  readonly url: string;
  readonly port: number;
  readonly opsUrl: string | null;
  /** Stops taking requests, ends open streams, lets requests in flight finish (at most `graceMs`), closes all. */
  close(graceMs?: number): Promise<void>;
}

/** How often a serve process says it is alive (`status` lists those seen in the last minute). */
const HEARTBEAT_MS = 15_000;
/** Time requests in flight get to finish on SIGTERM before their connections are dropped. */
const DEFAULT_GRACE_MS = 3000;
/** How often, while stopping, connections whose requests have finished are dropped. */
const IDLE_SWEEP_MS = 50;

/** What a running serve holds and may change on SIGHUP: the config and the tokens. */
interface ServeState {
  config: Config;
  tokens: readonly ServeToken[];
}

type QueueAppOf = Awaited<ReturnType<typeof openServeApp>>;

/** Redis (reconnecting: a Redis restart must not leave serve answering 503 until it is restarted too), the mirror. */
const openServeApp = (opts: StartServeOptions) =>
  createApp(opts.config, opts.env, { profile: 'queue', log: opts.log, reconnect: true });

/** The context of serve's routes: the write client, the queue, the rate limit, the state SIGHUP replaces. */
async function serveContext(
  app: QueueAppOf,
  current: ServeState,
  opts: StartServeOptions,
  stopping: AbortSignal,
  metrics: ServeMetrics | undefined,
): Promise<ServeContext> {
  const { redis } = app;
  const { prefix } = app.redisSettings;
  const writes = await createWriteQueue({
    connection: redis,
    prefix,
    config: {
      get writes() {
        return current.config.writes;
      },
      get tenants() {
        return current.config.tenants;
      },
    },
    themeSchema: async (t, c) => (await app.mirror())?.getThemeSchema(tenantSlug(t), c) ?? null,
    customAttributes: async (t) => (await app.mirror())?.customAttributes(tenantSlug(t)) ?? null,
    onWarning: (w) => opts.log.warn({ code: w.code }, w.message),
  });
  const queue = openWritesQueue(redis, prefix, errorsFailTheCalls);
  const rate = tokenRateLimit(redis, prefix, () => current.config.api?.rateLimit ?? 600);
  return {
    config: () => current.config,
    tokens: () => current.tokens,
    writes,
    queue,
    order: createRecordOrder({ redis, prefix, isPending: (id) => isPendingJob(queue, id) }),
    mirror: () => app.mirror(),
    writableWriteLog: () => app.writableWriteLog(),
    rate: (name) => rate(name),
    log: opts.log,
    stopping,
    refused: (status, token) => metrics?.refused(status, token),
  };
}

/** Listens; resolves with the server and the URL it answers at. */
async function listen(fetch: Hono<ServeEnv>['fetch'], port: number, host: string) {
  const server = serve({ fetch, port, hostname: host }) as Server;
  await Promise.race([
    once(server, 'listening'),
    once(server, 'error').then(([err]) => {
      throw err;
    }),
  ]);
  const bound = (server.address() as AddressInfo).port;
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return { server, port: bound, url: `http://${shown.includes(':') ? `[${shown}]` : shown}:${bound}` };
}

/** Says every 15 s that this process serves at `url` (`status` lists those seen in the last minute). */
async function startHeartbeat(redis: QueueAppOf['redis'], prefix: string, url: string, log: Logger) {
  const key = serveProcessesKey(prefix);
  const member = JSON.stringify({ host: hostname(), pid: process.pid, url, startedAt: new Date().toISOString() });
  const beat = async () => {
    const now = Date.now();
    await redis
      .multi()
      .zadd(key, now, member)
      .zremrangebyscore(key, 0, now - 3600_000)
      .exec()
      .catch((err: unknown) => log.warn({ err: String(err) }, 'serve heartbeat not written'));
  };
  await beat();
  const ticker = wallClock.every(HEARTBEAT_MS, () => void beat());
  return {
    async stop() {
      await ticker.stop();
      await redis.zrem(key, member).catch(() => undefined);
    },
  };
}

/** SIGHUP: the config and the tokens read again; a bad token keeps the old ones (logged). */
const reloadOnSighup = (current: ServeState, opts: StartServeOptions) =>
  watchSighup({
    configPath: opts.configPath,
    initial: opts.config,
    log: opts.log,
    requireKeys: false,
    target: {
      async reload(config, env) {
        const tokens = resolveServeTokens(config, env); // refused: the old tokens stay
        current.config = config;
        current.tokens = tokens;
        opts.log.info({ tokens: tokens.map((t) => t.name) }, 'serve tokens reloaded');
      },
    },
  });

/**
 * Stops taking requests and lets those in flight finish: `server.close()` drops the connections idle now; one whose
 * request ends later (a stream, a wait) stays open as keep-alive until the grace is over unless it is dropped once
 * idle too. After `graceMs` every connection is dropped.
 */
async function drain(server: Server, graceMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  const sweep = wallClock.every(IDLE_SWEEP_MS, () => server.closeIdleConnections());
  server.closeIdleConnections();
  const timer = setTimeout(() => server.closeAllConnections(), graceMs);
  await closed;
  clearTimeout(timer);
  await sweep.stop();
}

/**
 * Starts `understudy serve`: tokens checked first (a `ConfigError` naming `api.tokens.N` before anything is opened),
 * then Redis, the write client, the HTTP server, SIGHUP (tokens and config re-read) and the heartbeat.
 */
export async function startServe(opts: StartServeOptions): Promise<RunningServe> {
  const current: ServeState = { config: opts.config, tokens: resolveServeTokens(opts.config, opts.env) };
  const app = await openServeApp(opts);
  const stopping = new AbortController();
  const ops = opts.opsPort !== undefined ? createOpsMetrics() : null;
  const metrics = ops ? serveMetrics(ops.registry) : undefined;
  const ctx = await serveContext(app, current, opts, stopping.signal, metrics);
  const closeParts = () => closeAll([() => ctx.queue.close(), () => ctx.writes.close(), () => app.close()], 'serve');
  const http = serveApp(ctx, {
    // Whitespace is not counted against the body cap (compact JSON), so allow some before refusing the raw text.
    maxRequestBytes: 4 * (opts.config.writes?.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES),
    corsOrigins: opts.config.api?.cors?.origins ?? [],
    ...(metrics ? { metrics } : {}),
    extraRoutes: [...(opts.extraRoutes ?? []), mountReadRoutes(() => app.mirrorReads())],
  });
  const { server, port, url } = await listen(http.fetch, opts.port ?? 8080, opts.host ?? '127.0.0.1').catch(
    async (err: unknown) => {
      await closeParts();
      throw err;
    },
  );
  const opsServer: OpsServer | null =
    ops && opts.opsPort !== undefined
      ? await startOpsServer({
          port: opts.opsPort,
          ...(opts.opsHost ? { host: opts.opsHost } : {}),
          metrics: ops,
          ready: () => runChecks({ redis: redisCheck(app.redis) }),
          log: opts.log,
        })
      : null;
  const sighup = reloadOnSighup(current, opts);
  const heartbeat = await startHeartbeat(app.redis, app.redisSettings.prefix, url, opts.log);
  opts.log.info({ url, tokens: current.tokens.map((t) => t.name) }, 'serve listening');
  return {
    url,
    port,
    opsUrl: opsServer?.url ?? null,
    close: closeOnce(async (graceMs: number = DEFAULT_GRACE_MS) => {
      stopping.abort();
      await heartbeat.stop();
      await drain(server, graceMs);
      await closeAll([() => sighup.close(), async () => opsServer?.close(), closeParts], 'serve');
    }),
  };
}
