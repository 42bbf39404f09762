import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import { mountChangeRoutes } from './change-routes.js';
import { mountDocs } from './docs-page.js';
import { serveOpenApi } from './openapi.js';
import { problemOf, problemResponse, ServeProblem } from './problem.js';
import { authenticate, type ServeContext, type ServeEnv } from './serve-context.js';
import type { ServeMetrics } from './serve-metrics.js';
import { mountWriteRoutes } from './write-routes.js';
import { mountWritesApi } from './writes-api.js';

/** What the app needs besides the context: the largest request body, CORS origins, metrics. */
export interface ServeAppOptions {
  /** Bytes of request body read at most (413 past it); whitespace included. */
  readonly maxRequestBytes: number;
  /** Origins a browser may call from; empty: CORS off. */
  readonly corsOrigins: readonly string[];
  readonly metrics?: ServeMetrics;
  /** Routes of other parts (the description, the reads), mounted before the catch-all 404. */
  readonly extraRoutes?: readonly ((app: Hono<ServeEnv>, ctx: ServeContext) => void)[];
}

/**
 * serve's HTTP API: writes at the upstream's paths, `/v1/writes`, `/v1/changes` (docs/api.md). Every error is
 * RFC 9457 problem+json with a US_* code and never a stack; every route but the description needs a token.
 */
export function serveApp(ctx: ServeContext, opts: ServeAppOptions): Hono<ServeEnv> {
  const app = new Hono<ServeEnv>();
  app.onError((err, c) => {
    const p = problemOf(err);
    if (p.status >= 500 && !(err instanceof ServeProblem))
      ctx.log.error({ err, method: c.req.method, path: c.req.path }, 'request failed');
    return problemResponse(p);
  });
  app.notFound((c) =>
    problemResponse(
      new ServeProblem(404, 'US_NOT_FOUND', `no route ${c.req.method} ${c.req.path} (GET /v1/openapi.json lists them)`),
    ),
  );
  app.use('*', async (c, next) => {
    const started = performance.now();
    await next();
    const route = c.req.routePath === '/*' || c.req.routePath === '*' ? 'unmatched' : c.req.routePath;
    opts.metrics?.answered(route, c.req.method, c.res.status, (performance.now() - started) / 1000);
    ctx.log.debug(
      { method: c.req.method, route, status: c.res.status, ms: Math.round(performance.now() - started) },
      'answered',
    );
  });
  if (opts.corsOrigins.length > 0) {
    app.use(
      '*',
      cors({
        origin: [...opts.corsOrigins],
        allowHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'Prefer', 'Last-Event-ID', 'If-None-Match'],
        exposeHeaders: [
          'Location',
          'Preference-Applied',
          'RateLimit-Limit',
          'RateLimit-Remaining',
          'RateLimit-Reset',
          'Retry-After',
          'ETag',
        ],
      }),
    );
  }
  const limit = bodyLimit({
    maxSize: opts.maxRequestBytes,
    onError: () => {
      throw new ServeProblem(413, 'US_VALIDATION', `the request body is over ${opts.maxRequestBytes} bytes`);
    },
  });
  // A GET or HEAD has no body to limit: skipping them spares each read the web Request the limit would build.
  app.use('*', (c, next) => (c.req.method === 'GET' || c.req.method === 'HEAD' ? next() : limit(c, next)));
  // The description and its page need no token: they say nothing of the tenants.
  app.get('/v1/openapi.json', (c) => c.json(serveOpenApi()));
  mountDocs(app);
  for (const mount of opts.extraRoutes ?? []) mount(app, ctx);
  const guard = authenticate(ctx);
  // Hono's `/x/*` matches `/x` too: one registration each, or a request at `/x` is counted twice by the rate limit.
  app.use('/v1/writes/*', guard);
  app.use('/v1/changes/*', guard);
  app.use('/partners/*', guard);
  mountWritesApi(app, ctx);
  mountChangeRoutes(app, ctx);
  mountWriteRoutes(app, ctx);
  return app;
}
