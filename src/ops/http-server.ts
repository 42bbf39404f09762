import { createHmac, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { serve } from '@hono/node-server';
import { serveStatic } from '@hono/node-server/serve-static';
import type { Queue } from 'bullmq';
import { Hono, type MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { WRITES_QUEUE } from '../queue/write-queue.js';
import type { OpsMetrics } from './metrics.js';
import type { Readiness } from './readiness.js';

export const DASHBOARD_TOKEN_ENV = 'UNDERSTUDY_DASHBOARD_TOKEN';
const DASHBOARD_PATH = '/queues';
const COOKIE = 'understudy_dashboard';

export interface OpsServerOptions {
  /** 0 picks a free port (see `port` on the result). */
  readonly port: number;
  /** Default 0.0.0.0: the endpoints are meant for the orchestrator and Prometheus. */
  readonly host?: string;
  readonly metrics: Pick<OpsMetrics, 'text' | 'contentType'>;
  /** Readiness: Redis, database, migrations; called per `/readyz` request. */
  readonly ready: () => Promise<Readiness>;
  /** Queues shown on the dashboard. */
  readonly queues?: readonly Queue[];
  /** The dashboard's token; absent or empty turns the dashboard off (403). Never logged. */
  readonly dashboardToken?: string;
}

export interface OpsServer {
  readonly port: number;
  readonly url: string;
  /** Stops listening and drops open connections. Idempotent. */
  close(): Promise<void>;
}

const digest = (s: string): Buffer => createHmac('sha256', 'understudy-dashboard').update(s, 'utf8').digest();

/**
 * Guards the dashboard: `Authorization: Bearer <token>` or `?token=<token>`, which then sets an HttpOnly cookie
 * (holding a digest of the token, not the token) so the dashboard's own requests pass. Off without a token.
 */
function dashboardGuard(token: string | undefined): MiddlewareHandler {
  const want = token ? digest(token) : null;
  const matches = (given: string | undefined): boolean =>
    want !== null && given !== undefined && given !== '' && timingSafeEqual(digest(given), want);
  return async (c, next) => {
    if (!want) return c.json({ error: `dashboard disabled: set ${DASHBOARD_TOKEN_ENV} to turn it on` }, 403);
    const bearer = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '')?.[1]?.trim();
    const query = c.req.query('token');
    const cookie = getCookie(c, COOKIE);
    const cookieOk =
      cookie !== undefined && /^[0-9a-f]{64}$/.test(cookie) && timingSafeEqual(Buffer.from(cookie, 'hex'), want);
    if (matches(bearer) || matches(query)) {
      setCookie(c, COOKIE, want.toString('hex'), {
        httpOnly: true,
        sameSite: 'Strict',
        path: DASHBOARD_PATH,
      });
      return next();
    }
    if (cookieOk) return next();
    c.header('WWW-Authenticate', 'Bearer realm="understudy dashboard"');
    return c.json({ error: 'unauthorized' }, 401);
  };
}

/**
 * Refuses the dashboard's Retry of completed jobs of the writes queue: running a completed write again could
 * apply it twice (docs/writes.md, "Dashboard"). Failed writes may be retried; they go through the unknown-outcome
 * rule like `understudy writes retry`.
 */
function completedWritesGuard(queues: readonly Queue[]): MiddlewareHandler {
  const writes = queues.find((q) => q.name === WRITES_QUEUE);
  const refuse = (c: Parameters<MiddlewareHandler>[0]) =>
    c.json(
      {
        error:
          'a completed write cannot be retried: it was applied upstream, and running it again could apply it twice',
      },
      409,
    );
  return async (c, next) => {
    if (!writes || c.req.method !== 'PUT') return next();
    const m = /\/api\/queues\/([^/]+)\/(?:retry\/([^/]+)|([^/]+)\/retry)\/?$/.exec(c.req.path);
    if (!m || decodeURIComponent(m[1] ?? '') !== WRITES_QUEUE) return next();
    if (m[2] !== undefined) return m[2] === 'completed' ? refuse(c) : next();
    const job = await writes.getJob(decodeURIComponent(m[3] ?? ''));
    if (job && (await job.getState()) === 'completed') return refuse(c);
    return next();
  };
}

function buildApp(opts: OpsServerOptions): Hono {
  // Not strict: the dashboard links to `/queues/` as well as `/queues`.
  const app = new Hono({ strict: false });
  app.get('/healthz', (c) => c.json({ ok: true }));
  app.get('/readyz', async (c) => {
    const r = await opts.ready();
    return c.json(r, r.ok ? 200 : 503);
  });
  app.get('/metrics', async (c) => {
    const text = await opts.metrics.text();
    return c.body(text, 200, { 'Content-Type': opts.metrics.contentType });
  });

  const token = opts.dashboardToken || undefined;
  app.use(DASHBOARD_PATH, dashboardGuard(token));
  app.use(`${DASHBOARD_PATH}/*`, dashboardGuard(token));
  if (token) {
    app.use(`${DASHBOARD_PATH}/api/*`, completedWritesGuard(opts.queues ?? []));
    const adapter = new HonoAdapter(serveStatic).setBasePath(DASHBOARD_PATH);
    createBullBoard({
      queues: (opts.queues ?? []).map((q) => new BullMQAdapter(q, { readOnlyMode: false })),
      serverAdapter: adapter,
      options: { uiConfig: { boardTitle: 'understudy' } },
    });
    app.route(DASHBOARD_PATH, adapter.registerPlugin());
  }
  app.notFound((c) => c.json({ error: 'not found' }, 404));
  return app;
}

/** Serves `/healthz`, `/readyz`, `/metrics` and the token-guarded bull-board dashboard at `/queues`. */
export async function startOpsServer(opts: OpsServerOptions): Promise<OpsServer> {
  const app = buildApp(opts);
  const server = serve({ fetch: app.fetch, port: opts.port, hostname: opts.host ?? '0.0.0.0' }) as Server;
  await Promise.race([
    once(server, 'listening'),
    once(server, 'error').then(([err]) => {
      throw err;
    }),
  ]);
  const port = (server.address() as AddressInfo).port;
  const shownHost = opts.host && opts.host !== '0.0.0.0' ? opts.host : '127.0.0.1';
  let closing: Promise<void> | null = null;
  return {
    port,
    url: `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
