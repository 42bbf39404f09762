import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/vocabulary/ids.js';
import { docsOf, openSim } from './sim-helpers.js';

const FUTURE = '2099-01-01T00:00:00.000Z';

const post = async (url: string, body: unknown) => {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: r.status, json: (await r.json()) as JsonObject };
};

describe('mutate with a forced updatedAt', () => {
  it('dates edited and created records exactly as asked, over HTTP, and serves null as null', async () => {
    const api = await openSim();
    const future = await post(`${api.sim.url}/__sim/mutate`, {
      tenant: api.tenant,
      collection: 'events',
      edits: 1,
      creates: 1,
      updatedAt: FUTURE,
    });
    expect(future.status).toBe(200);
    const [edited] = future.json.edited as string[];
    const [created] = future.json.created as string[];
    expect((await api.get(`events/${edited}?depth=0`)).json.updatedAt).toBe(FUTURE);
    expect((await api.get(`events/${created}?depth=0`)).json.updatedAt).toBe(FUTURE);

    const nul = await post(`${api.sim.url}/__sim/mutate`, {
      tenant: api.tenant,
      collection: 'events',
      edits: 1,
      updatedAt: null,
    });
    const [undated] = nul.json.edited as string[];
    const read = await api.get(`events/${undated}?depth=0`);
    expect(read.text).toContain('"updatedAt":null');
    expect(read.json.updatedAt).toBeNull();
  });

  it('never moves the clock: a later ordinary edit of the same record is dated now', async () => {
    const api = await openSim();
    const c = api.sim.controls;
    const [id] = c.mutate({ tenant: api.tenant, collection: 'series', edits: 1, updatedAt: FUTURE }).edited;
    const before = Date.now();
    // Edit every record so the forced one is certainly among them.
    const n = c.docs(api.tenant, 'series').length;
    c.mutate({ tenant: api.tenant, collection: 'series', edits: n });
    const after = Date.now();
    for (const d of c.docs(api.tenant, 'series')) {
      const t = Date.parse(String(d.updatedAt));
      expect(t, String(d.id)).toBeGreaterThanOrEqual(before);
      expect(t, String(d.id)).toBeLessThanOrEqual(after + 1000);
    }
    expect(c.docs(api.tenant, 'series').some((d) => d.id === id)).toBe(true);
  });

  it('refuses an updatedAt that is neither a string nor null', async () => {
    const api = await openSim();
    const r = await post(`${api.sim.url}/__sim/mutate`, {
      tenant: api.tenant,
      collection: 'events',
      edits: 1,
      updatedAt: 12,
    });
    expect(r.status).toBe(400);
  });
});

describe('the stale-page fault', () => {
  it('answers a list request with the first page, ignoring where and page, and hasNextPage true', async () => {
    const api = await openSim();
    const first = await api.get('series?limit=3&sort=updatedAt,id&depth=0');
    await post(`${api.sim.url}/__sim/faults`, { kind: 'stale-page', count: 2, match: { path: 'series' } });
    const stale = await api.get('series?limit=3&sort=updatedAt,id&depth=0&page=3');
    expect(docsOf(stale).map((d) => d.id)).toEqual(docsOf(first).map((d) => d.id));
    expect(stale.json.hasNextPage).toBe(true);
    const lastId = String(docsOf(first)[2]?.id);
    const keyset = await api.get(`series?limit=3&sort=updatedAt,id&depth=0&where[id][greater_than]=${lastId}`);
    expect(docsOf(keyset).map((d) => d.id)).toEqual(docsOf(first).map((d) => d.id));
    // Spent: answered normally again.
    const normal = await api.get('series?limit=3&sort=updatedAt,id&depth=0&page=2');
    expect(docsOf(normal).map((d) => d.id)).not.toEqual(docsOf(first).map((d) => d.id));
  });
});
