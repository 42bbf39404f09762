import { describe, expect, it, onTestFinished } from 'vitest';
import { type CallOptions, withCallOptions } from '../../src/partners/partners-client.js';
import { discoverRoutes } from '../../src/sync/discover-routes.js';
import { syncCollection } from '../../src/sync/sync-collection.js';
import { tickCollection } from '../../src/sync/watch-collection.js';
import type { CollectionSlug } from '../../src/vocabulary/collections.js';
import { startFakeUpstream } from '../helpers/fake-upstream.js';
import { type Harness, syncHarness, unlimitedClient } from '../helpers/sync-harness.js';

const C: CollectionSlug = 'events';

/** The harness's client with every attempt counted. */
function counted(h: Harness, client = h.client) {
  const sent = { n: 0 };
  const c = withCallOptions(client, (o): CallOptions => ({ ...o, onAttempt: () => sent.n++ }));
  return { client: c, sent };
}

async function mirrored(h: Harness, client = h.client, c: CollectionSlug = C) {
  const routes = await discoverRoutes(client, { signal: AbortSignal.timeout(5000) });
  await syncCollection(h.deps({ client }), h.target, c, 'full', routes, AbortSignal.timeout(20_000));
  return routes;
}

const tick = async (
  h: Harness,
  routes: Awaited<ReturnType<typeof mirrored>>,
  client = h.client,
  coll: CollectionSlug = C,
) => {
  const { client: c, sent } = counted(h, client);
  const t = await tickCollection(
    {
      sync: h.deps({ client: c }),
      rows: h.watch,
      target: h.target,
      routes,
      signal: AbortSignal.timeout(20_000),
      unexplained: null,
    },
    coll,
  );
  return { ...t, requests: sent.n };
};

const live = (h: Harness) =>
  h
    .query<{ id: string }>('SELECT id FROM events WHERE tenant = ? AND deleted_at IS NULL', h.tenant.slug)
    .map((r) => String(r.id));

describe('watch: one turn of a collection', () => {
  it('costs one request when nothing changed upstream', async () => {
    const h = await syncHarness({ records: 150 });
    const routes = await mirrored(h);
    const t = await tick(h, routes);
    expect(t).toMatchObject({ outcome: 'quiet', requests: 1 });
  });

  it('mirrors an edit and a create at once: the probe, then one incremental page', async () => {
    const h = await syncHarness({ records: 150 });
    const routes = await mirrored(h);
    const m = h.sim.controls.mutate({ tenant: h.tenant.slug, collection: C, edits: 1, creates: 1 });
    const t = await tick(h, routes);
    expect(t.outcome).toBe('changed');
    expect(t.requests).toBe(2);
    const up = h.upstream(C).find((d) => String(d.id) === m.edited[0]);
    const [row] = h.query<{ updated_at: string }>('SELECT updated_at FROM events WHERE id = ?', m.edited[0]);
    expect(Date.parse(row?.updated_at ?? '')).toBe(Date.parse(String(up?.updatedAt)));
    expect(live(h)).toContain(m.created[0]);
  });

  it('finds hard deletes by counting, tombstones exactly them as deleted, in a few requests', async () => {
    const h = await syncHarness({ records: 400 });
    const routes = await mirrored(h);
    const before = live(h).length;
    expect(before).toBe(h.upstream(C).length);
    const m = h.sim.controls.mutate({ tenant: h.tenant.slug, collection: C, deletes: 2 });
    const t = await tick(h, routes);
    expect(t.outcome).toBe('deleted');
    const gone = h.query<{ id: string; deleted_reason: string }>(
      'SELECT id, deleted_reason FROM events WHERE tenant = ? AND deleted_at IS NOT NULL',
      h.tenant.slug,
    );
    expect(gone.map((g) => String(g.id)).sort()).toEqual([...m.deleted].sort());
    expect(gone.every((g) => g.deleted_reason === 'deleted')).toBe(true);
    expect(live(h).length).toBe(before - 2);
    // The probe, a count per halving of 400 rows down to 100, a read of each differing range, a look-up by id,
    // a draft look-up: far fewer than the 4 pages a full pass would read, and never the whole collection.
    expect(t.requests).toBeLessThanOrEqual(12);
    const changes = h.query<{ id: string; kind: string; reason: string }>(
      "SELECT id, kind, reason FROM changes WHERE kind = 'delete'",
    );
    expect(changes.map((c) => String(c.id)).sort()).toEqual([...m.deleted].sort());
    // Asked again, the counts agree: one request.
    expect(await tick(h, routes)).toMatchObject({ outcome: 'quiet', requests: 1 });
  });

  it('an edit and a delete at once: the edit mirrored, only the deleted record tombstoned', async () => {
    const h = await syncHarness({ records: 150 });
    const routes = await mirrored(h);
    const m = h.sim.controls.mutate({ tenant: h.tenant.slug, collection: C, edits: 3, deletes: 1 });
    const t = await tick(h, routes);
    expect(t.outcome).toBe('deleted');
    const gone = h.query<{ id: string }>(
      'SELECT id FROM events WHERE tenant = ? AND deleted_at IS NOT NULL',
      h.tenant.slug,
    );
    expect(gone.map((g) => String(g.id))).toEqual(m.deleted);
    for (const id of m.edited) {
      const up = h.upstream(C).find((d) => String(d.id) === id);
      const [row] = h.query<{ updated_at: string }>('SELECT updated_at FROM events WHERE id = ?', id);
      expect(Date.parse(row?.updated_at ?? '')).toBe(Date.parse(String(up?.updatedAt)));
    }
  });

  it('is not blinded by a record dated in the future: an edit made now is still seen', async () => {
    const h = await syncHarness({ records: 40 });
    h.sim.controls.mutate({ tenant: h.tenant.slug, collection: C, edits: 1, updatedAt: '2099-01-01T00:00:00.000Z' });
    const routes = await mirrored(h);
    expect(await tick(h, routes)).toMatchObject({ outcome: 'quiet', requests: 1 });
    const m = h.sim.controls.mutate({ tenant: h.tenant.slug, collection: C, edits: 1 });
    expect((await tick(h, routes)).outcome).toBe('changed');
    const up = h.upstream(C).find((d) => String(d.id) === m.edited[0]);
    const [row] = h.query<{ updated_at: string }>('SELECT updated_at FROM events WHERE id = ?', m.edited[0]);
    expect(Date.parse(row?.updated_at ?? '')).toBe(Date.parse(String(up?.updatedAt)));
  });

  it('sees a collection emptied upstream: every row tombstoned', async () => {
    const h = await syncHarness({ records: 12 });
    const routes = await mirrored(h);
    const n = h.upstream(C).length;
    h.sim.controls.mutate({ tenant: h.tenant.slug, collection: C, deletes: n });
    expect(h.upstream(C).length).toBe(0);
    expect((await tick(h, routes)).outcome).toBe('deleted');
    expect(live(h)).toEqual([]);
  });

  it('tombstones a record that left the published reads but exists as a draft as unpublished', async () => {
    const h = await syncHarness({ records: 30 });
    const hidden = new Set<string>();
    // Payload leaves an unpublished record out of published reads; draft=true reads still list it.
    const forward = async (path: string, rawQuery: string, auth: string) => {
      const r = await fetch(`${h.sim.url}${path}${rawQuery ? `?${rawQuery}` : ''}`, {
        headers: { authorization: auth },
      });
      return { status: r.status, json: (await r.json()) as { docs?: { id?: unknown }[]; totalDocs?: number } };
    };
    const up = await startFakeUpstream(async (req) => {
      const auth = String(req.headers.authorization ?? '');
      const { status, json } = await forward(req.path, req.rawQuery, auth);
      if (/(^|&)draft=true/.test(req.rawQuery) || !Array.isArray(json.docs) || hidden.size === 0)
        return { status, json };
      json.docs = json.docs.filter((d) => !hidden.has(String(d.id)));
      // The count leaves the hidden records out too: those the same query matches, counted by the simulator.
      const q = decodeURIComponent(req.rawQuery);
      const n = Math.max(-1, ...[...q.matchAll(/where\[and\]\[(\d+)\]/g)].map((m) => Number(m[1]))) + 1;
      const extra = `where[and][${n}][id][in]=${[...hidden].join(',')}`;
      const counted = await forward(req.path, `${q.replace(/(^|&)limit=\d+/, '$1limit=1')}&${extra}`, auth);
      if (typeof json.totalDocs === 'number') json.totalDocs -= counted.json.totalDocs ?? 0;
      return { status, json };
    });
    onTestFinished(() => up.close());
    const client = unlimitedClient(up.url, h.tenant);
    const routes = await mirrored(h, client, 'series');
    const victim = String(h.upstream('series')[5]?.id);
    hidden.add(victim);
    const t = await tick(h, routes, client, 'series');
    expect(t.outcome).toBe('deleted');
    const [row] = h.query<{ deleted_reason: string }>('SELECT deleted_reason FROM series WHERE id = ?', victim);
    expect(row?.deleted_reason).toBe('unpublished');
  });
});
