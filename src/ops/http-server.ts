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
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { closeOnce } from '../close-all.js';
import type { Logger } from '../log.js';
import { WRITES_QUEUE } from '../queue/write-queue.js';
import { VERSION } from '../version.js';
import type { OpsMetrics } from './metrics.js';
import type { Readiness } from './readiness.js';

export const DASHBOARD_TOKEN_ENV = 'UNDERSTUDY_DASHBOARD_TOKEN';
/** Hours a dashboard session cookie stays valid (default 12). */
export const DASHBOARD_SESSION_HOURS_ENV = 'UNDERSTUDY_DASHBOARD_SESSION_HOURS';
export const DEFAULT_DASHBOARD_SESSION_MS = 12 * 3600 * 1000;
const DASHBOARD_PATH = '/queues';
const COOKIE = 'understudy_dashboard';

export interface OpsServerOptions {
  /** 0 picks a free port (see `port` on the result). */
  readonly port: number;
  /** Default 127.0.0.1: closed to the network unless the operator opens it (`--http-host`). */
  readonly host?: string;
  readonly metrics: Pick<OpsMetrics, 'text' | 'contentType'>;
  /** Readiness: Redis, database, migrations; called per `/readyz` request. */
  readonly ready: () => Promise<Readiness>;
  /** Queues shown on the dashboard. */
  readonly queues?: readonly Queue[];
  /** The dashboard's token; absent or empty turns the dashboard off (403). Never logged. */
  readonly dashboardToken?: string;
  /** How long a dashboard session cookie is valid; default 12 h. The cookie carries its own signed expiry. */
  readonly sessionMs?: number;
  /** Clock for session expiry; default `Date.now`. */
  readonly now?: () => number;
  /** Each request is logged at debug as `{ method, path, status, ms }`: the path only, never the query string. */
  readonly log?: Pick<Logger, 'debug'>;
}

export interface OpsServer {
  readonly port: number;
  /** The address it listens on, e.g. `127.0.0.1`. */
  readonly host: string;
  readonly url: string;
  /** Stops listening and drops open connections. Idempotent. */
  close(): Promise<void>;
}

const digest = (s: string): Buffer => createHmac('sha256', 'understudy-dashboard').update(s, 'utf8').digest();

/** A browser asks for HTML; curl and scripts (any type, JSON) get JSON. */
const forPerson = (c: Context): boolean => /\btext\/html\b/.test(c.req.header('accept') ?? '');

const page = (title: string, body: string): string =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>understudy: ${title}</title>` +
  '<style>body{font:16px/1.5 system-ui,sans-serif;max-width:42em;margin:3em auto;padding:0 1em}' +
  'code{background:#f2f2f2;padding:0 .2em}</style></head>' +
  `<body><h1>${title}</h1>${body}</body></html>`;

const TOKEN_HTML =
  '<p>The queue dashboard needs its token: the value of <code>UNDERSTUDY_DASHBOARD_TOKEN</code> in the ' +
  "worker's environment.</p><p>Open <code>/queues?token=&lt;token&gt;</code> in this browser (the token then " +
  'leaves the address bar, and a session cookie keeps you signed in for 12 hours), or send the header ' +
  '<code>Authorization: Bearer &lt;token&gt;</code> from a script or a proxy.</p>';

const DISABLED_HTML =
  '<p>The queue dashboard is off: the worker runs without <code>UNDERSTUDY_DASHBOARD_TOKEN</code>.</p>' +
  "<p>Set it to a long random value (<code>openssl rand -hex 24</code>) in the worker's environment, restart " +
  'the worker, then open <code>/queues?token=&lt;that value&gt;</code>.</p>';

/** What `/` lists: every endpoint and what it answers. */
const ENDPOINTS: readonly (readonly [string, string])[] = [
  ['/healthz', 'liveness: 200 while the process is up'],
  ['/readyz', 'readiness: 200 when Redis, the database and its migrations are ready, 503 otherwise'],
  ['/metrics', 'Prometheus metrics (text format)'],
  ['/queues', 'the queue dashboard (needs UNDERSTUDY_DASHBOARD_TOKEN)'],
];

/**
 * Guards the dashboard: `Authorization: Bearer <token>` or `?token=<token>`, which then sets an HttpOnly cookie so
 * the dashboard's own requests pass. The cookie holds its expiry and an HMAC of it keyed by the token (never the
 * token), so it stops working after `sessionMs` even if the browser keeps it, and with any change of token. A GET
 * that carried `?token=` is redirected to the same URL without it, so the token leaves the address bar and history.
 */
function dashboardGuard(token: string | undefined, sessionMs: number, now: () => number): MiddlewareHandler {
  const want = token ? digest(token) : null;
  const matches = (given: string | undefined): boolean =>
    want !== null && given !== undefined && given !== '' && timingSafeEqual(digest(given), want);
  const sign = (expires: number): Buffer =>
    createHmac('sha256', want as Buffer)
      .update(String(expires))
      .digest();
  const cookieOk = (cookie: string | undefined): boolean => {
    const m = /^(\d{1,15})\.([0-9a-f]{64})$/.exec(cookie ?? '');
    if (!m || want === null) return false;
    const expires = Number(m[1]);
    return expires > now() && timingSafeEqual(Buffer.from(m[2] as string, 'hex'), sign(expires));
  };
  return async (c, next) => {
    if (!want) {
      const text = `dashboard disabled: set ${DASHBOARD_TOKEN_ENV} in the worker's environment to turn it on`;
      return forPerson(c) ? c.html(page('Dashboard disabled', DISABLED_HTML), 403) : c.json({ error: text }, 403);
    }
    const bearer = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '')?.[1]?.trim();
    const query = c.req.query('token');
    if (matches(bearer) || matches(query)) {
      const expires = now() + sessionMs;
      setCookie(c, COOKIE, `${expires}.${sign(expires).toString('hex')}`, {
        httpOnly: true,
        sameSite: 'Strict',
        path: DASHBOARD_PATH,
        maxAge: Math.floor(sessionMs / 1000),
      });
      if (query !== undefined && c.req.method === 'GET') {
        const url = new URL(c.req.url);
        url.searchParams.delete('token');
        return c.redirect(`${url.pathname}${url.search}`, 303);
      }
      return next();
    }
    if (cookieOk(getCookie(c, COOKIE))) return next();
    c.header('WWW-Authenticate', 'Bearer realm="understudy dashboard"');
    return forPerson(c)
      ? c.html(page('Token needed', TOKEN_HTML), 401)
      : c.json({ error: 'unauthorized: pass the token as Authorization: Bearer <token> or ?token=<token>' }, 401);
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
  const { log } = opts;
  if (log) {
    // The path only: the query string may hold the dashboard token (`?token=`), which must never reach a log line.
    app.use(async (c, next) => {
      const started = performance.now();
      await next();
      log.debug(
        { method: c.req.method, path: c.req.path, status: c.res.status, ms: Math.round(performance.now() - started) },
        'ops request',
      );
    });
  }
  app.get('/', (c) =>
    forPerson(c)
      ? c.html(
          page(
            'understudy worker',
            `<ul>${ENDPOINTS.map(([path, what]) => `<li><a href="${path}">${path}</a>: ${what}</li>`).join('')}</ul>`,
          ),
        )
      : c.json({ service: 'understudy worker', version: VERSION, endpoints: Object.fromEntries(ENDPOINTS) }),
  );
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
  const guard = dashboardGuard(token, opts.sessionMs ?? DEFAULT_DASHBOARD_SESSION_MS, opts.now ?? Date.now);
  app.use(DASHBOARD_PATH, guard);
  app.use(`${DASHBOARD_PATH}/*`, guard);
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

/**
 * Serves `/` (the list of endpoints), `/healthz`, `/readyz`, `/metrics` and the token-guarded bull-board dashboard
 * at `/queues` (whose refusal, to a browser, is a page saying how to pass the token).
 */
export async function startOpsServer(opts: OpsServerOptions): Promise<OpsServer> {
  const app = buildApp(opts);
  const host = opts.host ?? '127.0.0.1';
  const server = serve({ fetch: app.fetch, port: opts.port, hostname: host }) as Server;
  await Promise.race([
    once(server, 'listening'),
    once(server, 'error').then(([err]) => {
      throw err;
    }),
  ]);
  const { port, address } = server.address() as AddressInfo;
  const shownHost = host !== '0.0.0.0' && host !== '::' ? host : '127.0.0.1';
  return {
    port,
    host: address,
    url: `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}`,
    close: closeOnce(
      () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    ),
  };
}
