import { describe, expect, it, onTestFinished } from 'vitest';
import { createMemoryRateGate } from '../../src/partners/memory-rate-gate.js';
import { discoverRoutes, routesFromOpenApi } from '../../src/sync/discover-routes.js';
import { syncTenant } from '../../src/sync/sync-tenant.js';
import { tenantSlug } from '../../src/vocabulary/ids.js';
import { type RecordedRequest, startFakeUpstream } from '../helpers/fake-upstream.js';
import { testPool } from '../helpers/http-pool.js';
import { createHttpPartnersClient } from '../helpers/partners-client.js';
import { silentLog, syncHarness } from '../helpers/sync-harness.js';

type Doc = { id: number; updatedAt: string; title: string };

/** Applies the two `where` shapes sync sends (keyset and since) to numeric-id docs, as a Payload server would. */
function filter(docs: Doc[], q: RecordedRequest['query']): Doc[] {
  const where = (q.where ?? {}) as Record<string, unknown>;
  const since = (where.updatedAt as Record<string, string> | undefined)?.greater_than_equal;
  if (since) return docs.filter((d) => Date.parse(d.updatedAt) >= Date.parse(since));
  const or = where.or as
    | [Record<string, Record<string, string>>, { and: Record<string, Record<string, string>>[] }]
    | undefined;
  if (!or) return docs;
  const after = or[0].updatedAt?.greater_than ?? '';
  const afterId = Number(or[1].and[1]?.id?.greater_than);
  return docs.filter((d) => Date.parse(d.updatedAt) > Date.parse(after) || (d.updatedAt === after && d.id > afterId));
}

describe('a Payload-style upstream that differs where the spec is silent', () => {
  it('mirrors numeric ids from a server with no OpenAPI, a hidden page-size clamp and limits echoed as strings', async () => {
    // Ten records, three sharing one updatedAt, numeric ids (as Payload on PostgreSQL has them).
    const docs: Doc[] = Array.from({ length: 10 }, (_, i) => ({
      id: i + 1,
      updatedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i < 3 ? 0 : i)).toISOString(),
      title: `Series ${i + 1}`,
    }));
    const up = await startFakeUpstream((req) => {
      if (!req.path.endsWith('/series')) return { status: 404, json: { errors: [{ message: 'Not Found' }] } };
      const match = filter(docs, req.query);
      const page = match.slice(0, 3); // clamps to 3 without saying so
      return {
        status: 200,
        json: {
          docs: page,
          totalDocs: String(match.length),
          limit: String(req.query.limit),
          page: '1',
          hasNextPage: match.length > 3,
          nextPage: match.length > 3 ? 2 : null,
        },
      };
    });
    onTestFinished(() => up.close());
    const h = await syncHarness({ records: 1 });
    const client = createHttpPartnersClient({
      dispatcher: testPool(),
      baseUrl: up.url,
      tenant: tenantSlug('numeric-tenant'),
      apiKey: 'fake-key-fake-key-fake-key',
      gate: createMemoryRateGate({ reads: 1000, writes: 1000, windowMs: 1000 }),
      retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 5 },
      log: silentLog,
    });
    const routes = await discoverRoutes(client, { signal: new AbortController().signal });
    expect(routes.source).toBe('probe');
    expect([...routes.list]).toEqual(['series']);

    const deps = { client, store: h.store, log: silentLog };
    const target = { slug: tenantSlug('numeric-tenant'), collections: ['series' as const] };
    const first = await syncTenant(deps, target, 'full', new AbortController().signal, routes);
    expect(first.collections[0]).toMatchObject({ name: 'series', fetched: 10, inserted: 10 });
    const ids = h.query<{ id: string }>("SELECT id FROM series WHERE tenant = 'numeric-tenant'").map((r) => r.id);
    expect(ids.sort((a, b) => Number(a) - Number(b))).toEqual(docs.map((d) => String(d.id)));

    const again = await syncTenant(deps, target, 'incremental', new AbortController().signal, routes);
    expect(again.collections[0]).toMatchObject({ inserted: 0, updated: 0 });
  });

  it('reads list and get routes out of an OpenAPI description, whatever the path prefix', () => {
    const routes = routesFromOpenApi({
      openapi: '3.1.0',
      paths: {
        '/partners/{version}/{tenant}/series': { get: {}, post: {} },
        '/{version}/{tenant}/venues/{id}': { get: {} },
        '/partners/2026-02/{tenant}/event-instances/{id}': { patch: {} },
        '/partners/{version}/{tenant}/events/theme-settings/schema': { get: {} },
      },
    });
    expect(routes && [...routes.list]).toEqual(['series']);
    expect(routes && [...routes.get]).toEqual(['venues']);
    expect(routesFromOpenApi({ paths: {} })).toBeNull();
  });
});
