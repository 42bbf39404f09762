import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import { closeAll } from '../close-all.js';
import type { Config } from '../config/config-schema.js';
import type { Logger } from '../log.js';
import { watchSighup } from '../ops/config-reload.js';
import { type OpsServer, startOpsServer } from '../ops/http-server.js';
import { createOpsMetrics } from '../ops/metrics.js';
import { redisCheck, runChecks } from '../ops/readiness.js';
import { errorsFailTheCalls } from '../queue/error-listeners.js';
import { createRecordOrder } from '../queue/redis-record-order.js';
import { createWriteQueue, isPendingJob, openWritesQueue } from '../queue/write-queue.js';
import { mountReadRoutes } from '../serve/read-routes.js';
import { serveApp } from '../serve/serve-app.js';
import type { ServeContext, ServeEnv } from '../serve/serve-context.js';
import { serveMetrics } from '../serve/serve-metrics.js';
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

/** Where serve processes say they are alive: a sorted set of `{host, pid, url}` scored by the last time. */
export const serveProcessesKey = (prefix: string): string => `${prefix}:serve:processes`;

/**
 * Starts `understudy serve`: tokens checked first (a `ConfigError` naming `api.tokens.N` before anything is opened),
 * then Redis, the write client, the HTTP server, SIGHUP (tokens and config re-read) and the heartbeat.
 */
export async function startServe(opts: StartServeOptions): Promise<RunningServe> {
  const current = { config: opts.config, tokens: resolveServeTokens(opts.config, opts.env) as readonly ServeToken[] };
  const app = await createApp(opts.config, opts.env, { profile: 'queue', log: opts.log });
  const { redis } = app;
  const { prefix } = app.redisSettings;
  const stopping = new AbortController();
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
  const order = createRecordOrder({ redis, prefix, isPending: (id) => isPendingJob(queue, id) });
  const ops = opts.opsPort !== undefined ? createOpsMetrics() : null;
  const metrics = ops ? serveMetrics(ops.registry) : undefined;
  const rate = tokenRateLimit(redis, prefix, () => current.config.api?.rateLimit ?? 600);
  const ctx: ServeContext = {
    config: () => current.config,
    tokens: () => current.tokens,
    writes,
    queue,
    order,
    mirror: () => app.mirror(),
    writableWriteLog: () => app.writableWriteLog(),
    rate: (name) => rate(name),
    log: opts.log,
    stopping: stopping.signal,
    refused: (status, token) => metrics?.refused(status, token),
  };
  const maxBody = opts.config.writes?.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const http = serveApp(ctx, {
    // Whitespace is not counted against the body cap (compact JSON), so allow some before refusing the raw text.
    maxRequestBytes: 4 * maxBody,
    corsOrigins: opts.config.api?.cors?.origins ?? [],
    ...(metrics ? { metrics } : {}),
    extraRoutes: [...(opts.extraRoutes ?? []), mountReadRoutes(() => app.mirrorReads())],
  });
  const host = opts.host ?? '127.0.0.1';
  const server = serve({ fetch: http.fetch, port: opts.port ?? 8080, hostname: host }) as Server;
  await Promise.race([
    once(server, 'listening'),
    once(server, 'error').then(([err]) => {
      throw err;
    }),
  ]).catch(async (err: unknown) => {
    await closeAll([() => queue.close(), () => writes.close(), () => app.close()], 'serve');
    throw err;
  });
  const { port } = server.address() as AddressInfo;
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  const url = `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
  let opsServer: OpsServer | null = null;
  if (ops && opts.opsPort !== undefined) {
    opsServer = await startOpsServer({
      port: opts.opsPort,
      ...(opts.opsHost ? { host: opts.opsHost } : {}),
      metrics: ops,
      ready: () => runChecks({ redis: redisCheck(redis) }),
      log: opts.log,
    });
  }
  const sighup = watchSighup({
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
  const member = JSON.stringify({ host: hostname(), pid: process.pid, url, startedAt: new Date().toISOString() });
  const beat = async () => {
    const now = Date.now();
    await redis
      .multi()
      .zadd(serveProcessesKey(prefix), now, member)
      .zremrangebyscore(serveProcessesKey(prefix), 0, now - 3600_000)
      .exec()
      .catch((err: unknown) => opts.log.warn({ err: String(err) }, 'serve heartbeat not written'));
  };
  await beat();
  const heartbeat = wallClock.every(HEARTBEAT_MS, () => void beat());
  opts.log.info({ url, tokens: current.tokens.map((t) => t.name) }, 'serve listening');
  let closing: Promise<void> | null = null;
  return {
    url,
    port,
    opsUrl: opsServer?.url ?? null,
    close(graceMs = DEFAULT_GRACE_MS) {
      closing ??= (async () => {
        stopping.abort();
        await heartbeat.stop();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        // server.close() drops the connections idle now; one whose request ends later (a stream, a wait) stays open
        // as keep-alive until the grace is over unless it is dropped once idle too.
        const sweep = wallClock.every(IDLE_SWEEP_MS, () => server.closeIdleConnections());
        server.closeIdleConnections();
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        await closed;
        clearTimeout(timer);
        await sweep.stop();
        await closeAll(
          [
            () => sighup.close(),
            async () => opsServer?.close(),
            async () => {
              await redis.zrem(serveProcessesKey(prefix), member).catch(() => undefined);
            },
            () => queue.close(),
            () => writes.close(),
            () => app.close(),
          ],
          'serve',
        );
      })();
      return closing;
    },
  };
}
