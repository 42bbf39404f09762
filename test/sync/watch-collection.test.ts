import { describe, expect, it, onTestFinished } from 'vitest';
import { type CallOptions, withCallOptions } from '../../src/partners/partners-client.js';
import { discoverRoutes } from '../../src/sync/discover-routes.js';
import { syncCollection } from '../../src/sync/sync-collection.js';
import { tickCollection } from '../../src/sync/watch-collection.js';
import { API_VERSION, type CollectionSlug } from '../../src/vocabulary/collections.js';
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
  rotation: string | null = null,
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
      rotation,
    },
    coll,
  );
  return { ...t, requests: sent.n };
};

/** A hard delete upstream, as an editor makes it (the simulator's DELETE route, with the tenant's key). */
async function hardDelete(h: Harness, id: string, coll: CollectionSlug = C): Promise<void> {
  const r = await fetch(`${h.sim.url}/partners/${API_VERSION}/${h.tenant.slug}/${coll}/${id}`, {
    method: 'DELETE',
    headers: { authorization: `users API-Key ${h.tenant.key}` },
  });
  expect(r.status).toBe(200);
}

/** The upstream's records of the collection, oldest first. */
const byAge = (h: Harness, coll: CollectionSlug = C) =>
  [...h.upstream(coll)].sort(
    (a, b) =>
      Date.parse(String(a.updatedAt)) - Date.parse(String(b.updatedAt)) || String(a.id).localeCompare(String(b.id)),
  );

const upstreamIds = (h: Harness) =>
  h
    .upstream(C)
    .map((d) => String(d.id))
    .sort();

const live = (h: Harness) =>
  h
    .query<{ id: string }>('SELECT id FROM events WHERE tenant = ? AND deleted_at IS NULL', h.tenant.slug)
    .map((r) => String(r.id));

describe('watch: one turn of a collection', () => {
  it('costs one request when nothing changed upstream, two when the probe cannot list every record', async () => {
    const h = await syncHarness({ records: 80 });
    const routes = await mirrored(h);
    expect(await tick(h, routes)).toMatchObject({ outcome: 'quiet', requests: 1, rotating: false });
    // 150 records: the probe lists the newest 100, and a range of the rotation reads the rest (one read).
    const big = await syncHarness({ records: 150 });
    const bigRoutes = await mirrored(big);
    const t = await tick(big, bigRoutes);
    expect(t).toMatchObject({ outcome: 'quiet', requests: 2, rotating: true, rotation: null });
  });

  it('mirrors an edit and a create at once: the probe, then one incremental page', async () => {
    const h = await syncHarness({ records: 80 });
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
    // The probe, a range of the rotation, a count per halving of 400 rows down to 100, a read of each differing
    // range, a look-up by id, a draft look-up: far fewer than the 4 pages a full pass would read, and never the
    // whole collection.
    expect(t.requests).toBeLessThanOrEqual(12);
    console.info(JSON.stringify({ twoDeletesOf400: t.requests }));
    const changes = h.query<{ id: string; kind: string; reason: string }>(
      "SELECT id, kind, reason FROM changes WHERE kind = 'delete'",
    );
    expect(changes.map((c) => String(c.id)).sort()).toEqual([...m.deleted].sort());
    // Asked again, the counts agree: the probe and a range of the rotation.
    expect(await tick(h, routes)).toMatchObject({ outcome: 'quiet', requests: 2 });
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

  it('finds a late create and a delete that cancel in the count, in the turn after them', async () => {
    // The issue's reproduction: the newest record edited (and mirrored), then a record created dated 45 s back
    // (a late commit: older than the newest by more than the incremental pass's 1 s overlap) and an older record
    // hard deleted. The count still agrees; the mirror must still end equal to the upstream.
    const h = await syncHarness({ records: 40 });
    const { edited } = h.sim.controls.mutate({ tenant: h.tenant.slug, collection: C, edits: 1 });
    const routes = await mirrored(h);
    const newest = Date.parse(String(h.upstream(C).find((d) => String(d.id) === edited[0])?.updatedAt));
    const late = new Date(Math.min(Date.now() - 45_000, newest - 10_000)).toISOString();
    const { created } = h.sim.controls.mutate({ tenant: h.tenant.slug, collection: C, creates: 1, updatedAt: late });
    const old = byAge(h).find((d, i) => i >= 3 && String(d.id) !== created[0] && String(d.id) !== edited[0]);
    await hardDelete(h, String(old?.id));
    expect(live(h).length).toBe(h.upstream(C).length);
    const t = await tick(h, routes);
    expect(live(h).sort()).toEqual(upstreamIds(h));
    expect(t.outcome).toBe('deleted');
    // The probe (which lists every record here), the pass's page, the range read whole, the look-up by id.
    expect(t.requests).toBeLessThanOrEqual(5);
    expect(await tick(h, routes)).toMatchObject({ outcome: 'quiet', requests: 1 });
  });

  it('finds an old-dated create and a delete that cancel in the count in a large collection, by rotation', async () => {
    const h = await syncHarness({ records: 400 });
    const routes = await mirrored(h);
    // Both in the third range of the rotation (records 200 to 300 by age): the probe lists the newest 100, and each
    // turn reads one range of 100 of the older 300, oldest first.
    const aged = byAge(h);
    const at = Date.parse(String(aged[250]?.updatedAt));
    const { created } = h.sim.controls.mutate({
      tenant: h.tenant.slug,
      collection: C,
      creates: 1,
      updatedAt: new Date(at).toISOString(),
    });
    await hardDelete(h, String(aged[230]?.id));
    expect(live(h).length).toBe(h.upstream(C).length);
    let rotation: string | null = null;
    const turns: { outcome: string; requests: number }[] = [];
    for (let turn = 0; turn < 4 && live(h).sort().join() !== upstreamIds(h).join(); turn++) {
      const t = await tick(h, routes, h.client, C, rotation);
      turns.push({ outcome: t.outcome, requests: t.requests });
      rotation = (t as { rotation?: string | null }).rotation ?? null;
    }
    expect(live(h).sort()).toEqual(upstreamIds(h));
    expect(live(h)).toContain(created[0]);
    // Within one cycle of the rotation (3 turns); a quiet turn costs the probe and one range.
    expect(turns.length).toBeLessThanOrEqual(3);
    for (const t of turns.filter((x) => x.outcome === 'quiet')) expect(t.requests).toBe(2);
    console.info(JSON.stringify({ rotationTurns: turns }));
  });

  it('finds the delete of a record dated in the future', async () => {
    const h = await syncHarness({ records: 40 });
    const { edited } = h.sim.controls.mutate({
      tenant: h.tenant.slug,
      collection: C,
      edits: 1,
      updatedAt: '2099-01-01T00:00:00.000Z',
    });
    const routes = await mirrored(h);
    const id = String(edited[0]);
    expect(live(h)).toContain(id);
    await hardDelete(h, id);
    const t = await tick(h, routes);
    expect(t.outcome).toBe('deleted');
    expect(live(h)).not.toContain(id);
    expect(live(h).sort()).toEqual(upstreamIds(h));
  });
});
