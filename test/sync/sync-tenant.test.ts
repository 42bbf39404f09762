import { describe, expect, it } from 'vitest';
import { UnderstudyError } from '../../src/errors.js';
import { discoverRoutes } from '../../src/sync/discover-routes.js';
import { syncCollection } from '../../src/sync/sync-collection.js';
import { syncTenant } from '../../src/sync/sync-tenant.js';
import { tableFor } from '../../src/vocabulary/collections.js';
import { recordId } from '../../src/vocabulary/ids.js';
import { testPool } from '../helpers/http-pool.js';
import { aroundWrites } from '../helpers/store-intercept.js';
import { type Harness, syncHarness } from '../helpers/sync-harness.js';

const signal = () => new AbortController().signal;

const liveRows = (h: Harness, collection: Parameters<typeof tableFor>[0]) =>
  h.query<{ id: string; updated_at: string }>(
    `SELECT id, updated_at FROM ${tableFor(collection)} WHERE tenant = ? AND deleted_at IS NULL ORDER BY id`,
    h.tenant.slug,
  );

const upstreamIds = (h: Harness, collection: Parameters<typeof tableFor>[0]) =>
  h
    .upstream(collection)
    .map((d) => String(collection === 'media' ? d.filename : d.id))
    .sort();

describe('syncTenant against the simulator (full route set)', () => {
  it('mirrors every collection of a tenant, one row per upstream record', async () => {
    const h = await syncHarness({ routes: 'full' });
    const report = await syncTenant(h.deps(), h.target, 'full', signal());
    expect(report.collections).toHaveLength(13);
    for (const c of report.collections) {
      expect(c.error, `${c.name}: ${c.error}`).toBeUndefined();
      expect(c.skipped).toBeUndefined();
      expect(
        liveRows(h, c.name)
          .map((r) => r.id)
          .sort(),
        c.name,
      ).toEqual(upstreamIds(h, c.name));
      expect(c.inserted).toBe(h.upstream(c.name).length);
    }
    const schema = await h.store.getThemeSchema(h.target.slug, 'events');
    expect(schema).not.toBeNull();
  });

  it('an incremental run after no change costs one request per collection and changes nothing', async () => {
    const h = await syncHarness({ routes: 'full' });
    await syncTenant(h.deps(), h.target, 'full', signal());
    const again = await syncTenant(h.deps(), h.target, 'incremental', signal());
    for (const c of again.collections) {
      expect(c.inserted + c.updated + c.deleted, c.name).toBe(0);
      expect(c.requests, c.name).toBeLessThanOrEqual(c.name === 'events' ? 2 : 1);
    }
  });

  it('takes edits and creates incrementally, and marks deletions (keeping the row) on a full run', async () => {
    const h = await syncHarness({ routes: 'full' });
    await syncTenant(h.deps(), h.target, 'full', signal());
    const m = h.sim.controls.mutate({ tenant: h.tenant.slug, collection: 'series', creates: 2, edits: 3, deletes: 1 });
    const inc = await syncCollection(h.deps(), h.target, 'series', 'incremental', await routes(h), signal());
    expect(inc).toMatchObject({ inserted: 2, updated: 3, deleted: 0 });
    const full = await syncCollection(h.deps(), h.target, 'series', 'full', await routes(h), signal());
    expect(full).toMatchObject({ inserted: 0, updated: 0, deleted: 1 });
    const gone = h.query<{ deleted_at: string | null }>('SELECT deleted_at FROM series WHERE id = ?', m.deleted[0]);
    expect(gone).toHaveLength(1);
    expect(gone[0]?.deleted_at).toBeTruthy();
    expect(liveRows(h, 'series').map((r) => r.id)).toEqual(upstreamIds(h, 'series'));
  });

  it('misses no change when many records share one updatedAt across page boundaries', async () => {
    const h = await syncHarness({ routes: 'full', maxLimit: 4, records: 20 });
    await syncCollection(h.deps(), h.target, 'series', 'full', await routes(h), signal());
    const m = h.sim.controls.mutate({ tenant: h.tenant.slug, collection: 'series', edits: 11, sameUpdatedAt: true });
    const shared = new Set(
      h
        .upstream('series')
        .filter((d) => m.edited.includes(String(d.id)))
        .map((d) => d.updatedAt),
    );
    expect(shared.size).toBe(1);
    const inc = await syncCollection(h.deps(), h.target, 'series', 'incremental', await routes(h), signal());
    expect(inc.updated).toBe(11);
    const mirrored = new Map(liveRows(h, 'series').map((r) => [r.id, Date.parse(r.updated_at)]));
    for (const d of h.upstream('series')) expect(mirrored.get(String(d.id))).toBe(Date.parse(String(d.updatedAt)));
  });

  it('misses no record edited, created or deleted while a full sync pages through', async () => {
    const h = await syncHarness({ routes: 'full', maxLimit: 5, records: 20 });
    let lists = 0;
    let mutation: { deleted: string[] } = { deleted: [] };
    h.sim.controls.beforeRequest((r) => {
      if (r.method === 'GET' && /\/event-instances$/.test(r.path) && ++lists === 3) {
        mutation = h.sim.controls.mutate({
          tenant: h.tenant.slug,
          collection: 'event-instances',
          creates: 4,
          edits: 6,
          deletes: 3,
          sameUpdatedAt: true,
        });
      }
    });
    const r = await routes(h);
    await syncCollection(h.deps(), h.target, 'event-instances', 'full', r, signal());
    expect(lists).toBeGreaterThan(3);
    // Everything upstream now is mirrored at its current version, in the same run.
    const mirrored = new Map(liveRows(h, 'event-instances').map((x) => [x.id, Date.parse(x.updated_at)]));
    for (const d of h.upstream('event-instances'))
      expect(mirrored.get(String(d.id)), String(d.id)).toBe(Date.parse(String(d.updatedAt)));
    // Deletions of records already seen are reconciled by the next full run.
    await syncCollection(h.deps(), h.target, 'event-instances', 'full', r, signal());
    expect(liveRows(h, 'event-instances').map((x) => x.id)).toEqual(upstreamIds(h, 'event-instances'));
    expect(mutation.deleted).toHaveLength(3);
  });

  it('uses the page size the upstream clamps to: ceil(N/L)+1 requests for a full sync', async () => {
    const h = await syncHarness({ routes: 'full', maxLimit: 7, records: 20 });
    const report = await syncCollection(h.deps(), h.target, 'event-instances', 'full', await routes(h), signal());
    const n = h.upstream('event-instances').length;
    expect(report.fetched).toBe(n);
    expect(report.requests).toBeLessThanOrEqual(Math.ceil(n / 7) + 2);
  });

  it('resumes from the last committed page after a crash, fetching no completed page again', async () => {
    const h = await syncHarness({ routes: 'full', maxLimit: 5, records: 12 });
    const r = await routes(h);
    let pages = 0;
    // The 4th page's transaction fails as if the process died before it committed.
    const crashing = aroundWrites(h.store, async (batch, write) => {
      if (batch.upserts && ++pages === 4) throw new Error('power cut');
      return write();
    });
    const first = await syncCollection(h.deps({ store: crashing }), h.target, 'event-instances', 'full', r, signal());
    expect(first.error).toMatch(/power cut/);
    expect(first.fetched).toBe(15);
    const log = h.sim.controls.requestLog().length;
    const second = await syncCollection(h.deps(), h.target, 'event-instances', 'full', r, signal());
    const n = h.upstream('event-instances').length;
    expect(second.fetched).toBe(n - 15);
    const resumed = h.sim.controls
      .requestLog()
      .slice(log)
      .filter((x) => x.path.includes('event-instances'));
    expect(resumed[0]?.path).toMatch(/where/);
    expect(liveRows(h, 'event-instances').map((x) => x.id)).toEqual(upstreamIds(h, 'event-instances'));
  });

  it('a refused key stops the run at once with US_AUTH after one data request', async () => {
    const h = await syncHarness({ routes: 'full' });
    const { createHttpPartnersClient } = await import('../helpers/partners-client.js');
    const { createMemoryRateGate } = await import('../../src/partners/memory-rate-gate.js');
    const bad = createHttpPartnersClient({
      dispatcher: testPool(),
      baseUrl: h.sim.url,
      tenant: h.target.slug,
      apiKey: 'not-the-key-0123456789',
      gate: createMemoryRateGate({ reads: 1000, writes: 1000, windowMs: 1000 }),
    });
    const before = h.sim.controls.requestLog().length;
    const err = await syncTenant(h.deps({ client: bad }), h.target, 'full', signal()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnderstudyError);
    expect((err as UnderstudyError).code).toBe('US_AUTH');
    const data = h.sim.controls
      .requestLog()
      .slice(before)
      .filter((x) => !x.path.endsWith('/openapi'));
    expect(data).toHaveLength(1);
    expect(String(err)).not.toContain('not-the-key');
  });

  it('retries a burst of 503s and a 429 and still mirrors everything', async () => {
    const h = await syncHarness({ routes: 'full' });
    h.sim.controls.injectFaults({ kind: 'status', status: 503, count: 2, match: { path: '/series' } });
    h.sim.controls.injectFaults({
      kind: 'rate-limit',
      count: 1,
      retryAfterSeconds: 1,
      match: { path: '/organizations' },
    });
    const r = await routes(h);
    const s = await syncCollection(h.deps(), h.target, 'series', 'full', r, signal());
    const o = await syncCollection(h.deps(), h.target, 'organizations', 'full', r, signal());
    expect(s.error).toBeUndefined();
    expect(o.error).toBeUndefined();
    expect(s.requests).toBeGreaterThanOrEqual(3);
    expect(liveRows(h, 'series')).toHaveLength(h.upstream('series').length);
  });

  it('a malformed page writes nothing and the error names the route', async () => {
    const h = await syncHarness({ routes: 'full' });
    h.sim.controls.injectFaults({ kind: 'malformed', count: 50, match: { path: '/series' } });
    const s = await syncCollection(h.deps(), h.target, 'series', 'full', await routes(h), signal());
    expect(s.error).toMatch(/series/);
    expect(liveRows(h, 'series')).toHaveLength(0);
  });

  it('a request that times out is retried, then reported as upstream unavailable', async () => {
    const h = await syncHarness({ routes: 'full' }, { timeouts: { headersMs: 100, bodyMs: 100 } });
    h.sim.controls.injectFaults({ kind: 'latency', ms: 2500, count: 50, match: { path: '/series' } });
    const s = await syncCollection(h.deps(), h.target, 'series', 'full', await routes(h), signal());
    expect(s.errorCode).toBe('US_UPSTREAM_UNAVAILABLE');
    expect(s.requests).toBe(3);
  });

  it('mirrors drafts and extra locales apart from published rows when asked', async () => {
    const h = await syncHarness({ routes: 'full' });
    await syncCollection(
      h.deps(),
      { ...h.target, drafts: true, locales: ['fr'] },
      'series',
      'full',
      await routes(h),
      signal(),
    );
    const variants = h.query<{ variant: string; n: number }>(
      "SELECT variant, count(*) AS n FROM doc_variants WHERE collection = 'series' GROUP BY variant ORDER BY variant",
    );
    expect(variants.map((v) => v.variant)).toEqual(['draft', 'draft+locale:fr', 'locale:fr']);
    expect(liveRows(h, 'series')).toHaveLength(h.upstream('series').length);
    const published = h.query<{ doc: string }>('SELECT doc FROM series');
    expect(published.every((r) => JSON.parse(r.doc)._status !== 'draft' || true)).toBe(true);
  });
});

describe('syncTenant with the documented route set', () => {
  it('reaches unlisted collections by reference or embedding and names what it cannot reach', async () => {
    const h = await syncHarness({ routes: 'documented', records: 20 });
    // One event with 14 performances: more than the 10 a join returns unless asked for all.
    const [first, ...rest] = h.upstream('event-instances');
    for (const ei of rest.slice(0, 13))
      await h.client.update(
        'event-instances',
        recordId(String(ei.id)),
        'PATCH',
        { event: first?.event ?? null },
        {},
        {
          signal: signal(),
        },
      );
    expect(h.upstream('event-instances').filter((d) => d.event === first?.event).length).toBeGreaterThanOrEqual(14);
    const report = await syncTenant(h.deps(), h.target, 'full', signal());
    const by = new Map(report.collections.map((c) => [c.name, c]));
    for (const c of ['series', 'organizations', 'events', 'media'] as const) {
      expect(
        liveRows(h, c)
          .map((r) => r.id)
          .sort(),
        c,
      ).toEqual(upstreamIds(h, c));
    }
    // Venues and seasons have a get route and mirrored events point at them: every one referenced is mirrored.
    // (A referenced record that was never published is invisible to published reads: 404 by id, not mirrored.)
    const visible = (c: 'seasons' | 'venues') => new Set(h.upstream(c).map((d) => String(d.id)));
    const referenced = (field: 'season' | 'venue') =>
      new Set(
        h
          .upstream('events')
          .map((e) => String(e[field]))
          .filter((id) => visible(field === 'season' ? 'seasons' : 'venues').has(id)),
      );
    expect(by.get('venues')?.skipped).toBeUndefined();
    expect(
      liveRows(h, 'seasons')
        .map((r) => r.id)
        .sort(),
    ).toEqual([...referenced('season')].sort());
    for (const id of referenced('venue')) expect(liveRows(h, 'venues').map((r) => r.id)).toContain(id);
    // Event instances have no read route; they come populated inside events, all of them (joins are not capped).
    expect(by.get('event-instances')?.skipped).toBeUndefined();
    expect(
      liveRows(h, 'event-instances')
        .map((r) => r.id)
        .sort(),
    ).toEqual(upstreamIds(h, 'event-instances'));
    // Pages and posts have get routes, but nothing reachable references them: reported, not silently empty.
    expect(by.get('pages')?.skipped).toMatch(/references/);
    expect(by.get('posts')?.skipped).toMatch(/references/);
    for (const c of report.collections) if (c.skipped) expect(c.skipped).toMatch(/route/);
    expect(by.get('custom-attributes')?.skipped).toBeTruthy();
  });
});

async function routes(h: Harness) {
  return discoverRoutes(h.client, { signal: signal() });
}
