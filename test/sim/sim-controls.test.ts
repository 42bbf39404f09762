import { describe, expect, it, vi } from 'vitest';
import type { JsonObject } from '../../src/vocabulary/ids.js';
import { type Api, docsOf, openSim } from './sim-helpers.js';

describe('rate limits', () => {
  it('allows N reads per rolling window per key, then 429 with Retry-After and RateLimit-* headers', async () => {
    const api = await openSim({ readLimit: 3, writeLimit: 2, windowMs: 400 });
    const ok = await api.get('series?limit=1');
    expect(ok.headers.get('ratelimit-limit')).toBe('3');
    expect(ok.headers.get('ratelimit-remaining')).toBe('2');
    expect(Number(ok.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
    await api.get('series?limit=1');
    await api.get('series?limit=1');
    const limited = await api.get('series?limit=1');
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual({ errors: [{ message: 'Too many requests' }] });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    // Writes have their own budget.
    const ei = api.sim.controls.docs(api.tenant, 'event-instances')[0];
    expect((await api.req('PATCH', `event-instances/${ei?.id}`, {})).status).toBe(200);
    expect((await api.req('PATCH', `event-instances/${ei?.id}`, {})).status).toBe(200);
    expect((await api.req('PATCH', `event-instances/${ei?.id}`, {})).status).toBe(429);
    const c = api.sim.controls.counters();
    expect(c.tenants[api.tenant]?.rateLimited).toBe(2);
    expect(c.tenants[api.tenant]?.writes).toBe(2);
    // The window rolls: reads come back once the oldest falls out of it.
    await vi.waitFor(async () => expect((await api.get('series?limit=1')).status).toBe(200), {
      timeout: 5000,
      interval: 50,
    });
  });

  it('keeps keys apart, exempts public and admin routes, and takes new limits at run time', async () => {
    const api = await openSim({ readLimit: 1, windowMs: 60_000 });
    const other = api.sim.tenants[1];
    expect((await api.get('series')).status).toBe(200);
    expect((await api.get('series')).status).toBe(429);
    const o = await fetch(`${api.sim.url}/partners/2026-02/${other?.slug}/series`, {
      headers: { authorization: `users API-Key ${other?.key}` },
    });
    expect(o.status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await fetch(`${api.sim.url}/partners/openapi`)).status).toBe(200);
    api.sim.controls.setRateLimits({ readLimit: 0 });
    expect((await api.get('series')).status).toBe(200);
    const r = await fetch(`${api.sim.url}/__sim/rate-limits`, {
      method: 'PUT',
      body: JSON.stringify({ readLimit: 1 }),
    });
    expect(((await r.json()) as JsonObject).readLimit).toBe(1);
    api.sim.controls.reset();
    expect((await api.get('series')).status).toBe(200);
    expect((await api.get('series')).status).toBe(429);
  });
});

describe('faults', () => {
  it('answers the next N matching requests with a status, then recovers', async () => {
    const api = await openSim();
    api.sim.controls.injectFaults({ kind: 'status', status: 503, count: 2, match: { path: '/series' } });
    expect((await api.get('events')).status).toBe(200);
    expect((await api.get('series')).status).toBe(503);
    expect((await api.get('series')).status).toBe(503);
    expect((await api.get('series')).status).toBe(200);
  });

  it('resets the connection', async () => {
    const api = await openSim();
    api.sim.controls.injectFaults({ kind: 'reset', count: 1 });
    await expect(api.get('series')).rejects.toThrow();
    expect((await api.get('series')).status).toBe(200);
  });

  it('sends a truncated JSON body with 200', async () => {
    const api = await openSim();
    api.sim.controls.injectFaults({ kind: 'malformed', count: 1, match: { method: 'GET' } });
    const r = await api.get('series');
    expect(r.status).toBe(200);
    expect(() => JSON.parse(r.text)).toThrow();
  });

  it('answers 429 with the given Retry-After', async () => {
    const api = await openSim();
    api.sim.controls.injectFaults({ kind: 'rate-limit', count: 1, retryAfterSeconds: 7 });
    const r = await api.get('series');
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('7');
  });

  it('delays a request without holding up others', async () => {
    const api = await openSim();
    api.sim.controls.injectFaults({ kind: 'latency', ms: 400, count: 1, match: { path: 'slow-marker' } });
    const order: string[] = [];
    const slow = api.get('series?where[slug][not_equals]=slow-marker').then(() => order.push('slow'));
    await vi.waitFor(() => expect(api.sim.controls.requestLog().length + 1).toBeGreaterThan(0));
    const fast = api.get('events').then(() => order.push('fast'));
    await Promise.all([slow, fast]);
    expect(order).toEqual(['fast', 'slow']);
  });

  it('takes faults over HTTP too', async () => {
    const api = await openSim();
    const r = await fetch(`${api.sim.url}/__sim/faults`, {
      method: 'POST',
      body: JSON.stringify({ kind: 'status', status: 500, count: 1 }),
    });
    expect(r.status).toBe(200);
    expect((await api.get('series')).status).toBe(500);
    expect(
      (await fetch(`${api.sim.url}/__sim/faults`, { method: 'POST', body: '{"kind":"nope","count":1}' })).status,
    ).toBe(400);
  });
});

describe('hooks, counters and the request log', () => {
  it('runs beforeRequest hooks with a running count, so data can change at a precise moment', async () => {
    const api = await openSim();
    let edited: string[] = [];
    const off = api.sim.controls.beforeRequest((req) => {
      if (req.n === 2) edited = api.sim.controls.mutate({ tenant: api.tenant, collection: 'series', edits: 3 }).edited;
    });
    const p1 = await api.get('series?sort=-updatedAt&limit=3&depth=0');
    const p2 = await api.get('series?sort=-updatedAt&limit=3&depth=0');
    off();
    expect(edited).toHaveLength(3);
    expect(
      docsOf(p2)
        .map((d) => d.id)
        .sort(),
    ).toEqual([...edited].sort());
    expect(docsOf(p1).map((d) => d.id)).not.toEqual(docsOf(p2).map((d) => d.id));
  });

  it('counts reads and writes per tenant and per key hash, and logs requests without keys', async () => {
    const api = await openSim();
    await api.get('series?limit=2');
    await api.get('series?where[title][like]=jazz');
    await api.req('GET', 'series', undefined, { authorization: 'Bearer x' });
    const c = api.sim.controls.counters();
    expect(c.tenants[api.tenant]).toEqual({ reads: 2, writes: 0, rateLimited: 0 });
    expect(Object.values(c.keys)[0]?.reads).toBe(2);
    expect(Object.keys(c.keys)[0]).toMatch(/^[0-9a-f]{12}$/);
    await vi.waitFor(() => expect(api.sim.controls.requestLog()).toHaveLength(3));
    const log = api.sim.controls.requestLog();
    expect(log[0]).toMatchObject({ method: 'GET', status: 200, tenant: api.tenant });
    expect(log[0]?.path).toContain('/series?limit=2');
    expect(log[2]?.status).toBe(401);
    expect(JSON.stringify(log)).not.toContain(api.key);
    const http = (await (await fetch(`${api.sim.url}/__sim/counters`)).json()) as JsonObject;
    expect(http.total).toMatchObject({ reads: 2 });
    await fetch(`${api.sim.url}/__sim/reset`, { method: 'POST' });
    expect(api.sim.controls.requestLog()).toHaveLength(0);
    expect(api.sim.controls.counters().total.reads).toBe(0);
  });
});

describe('mutation', () => {
  it('creates, edits and deletes deterministically, always moving updatedAt forward', async () => {
    const run = async (): Promise<{ api: Api; r: ReturnType<Api['sim']['controls']['mutate']> }> => {
      const api = await openSim({ seed: 5 });
      return {
        api,
        r: api.sim.controls.mutate({
          tenant: api.tenant,
          collection: 'event-instances',
          creates: 2,
          edits: 3,
          deletes: 2,
        }),
      };
    };
    const a = await run();
    const b = await run();
    expect(a.r.edited).toEqual(b.r.edited);
    expect(a.r.deleted).toEqual(b.r.deleted);
    expect(a.r.created).toHaveLength(2);
    const { api, r } = a;
    for (const id of r.deleted) expect((await api.get(`event-instances/${id}`)).status).toBe(404);
    for (const id of r.created) expect((await api.get(`event-instances/${id}`)).status).toBe(200);
    const fresh = await openSim({ seed: 5 });
    const before = new Map(fresh.sim.controls.docs(fresh.tenant, 'event-instances').map((d) => [d.id, d.updatedAt]));
    for (const id of r.edited) {
      const now = (await api.get(`event-instances/${id}?depth=0`)).json.updatedAt as string;
      expect(Date.parse(now)).toBeGreaterThan(Date.parse(String(before.get(id))));
    }
  });

  it('gives all edited and created records one updatedAt with sameUpdatedAt', async () => {
    const api = await openSim();
    const r = api.sim.controls.mutate({
      tenant: api.tenant,
      collection: 'series',
      edits: 5,
      creates: 2,
      sameUpdatedAt: true,
    });
    const docs = api.sim.controls.docs(api.tenant, 'series');
    const stamps = new Set(
      docs.filter((d) => [...r.edited, ...r.created].includes(String(d.id))).map((d) => d.updatedAt),
    );
    expect(stamps.size).toBe(1);
    const res = await fetch(`${api.sim.url}/__sim/mutate`, {
      method: 'POST',
      body: JSON.stringify({ tenant: api.tenant, collection: 'posts', edits: 2 }),
    });
    expect(((await res.json()) as JsonObject).edited).toHaveLength(2);
  });

  it('runs a rate-driven mutator until stopped', async () => {
    const api = await openSim();
    const total = (): number => api.sim.controls.docs(api.tenant, 'media').length;
    const start = total();
    api.sim.controls.startMutator({ tenant: api.tenant, collection: 'media', perSecond: 50, creates: 1, edits: 1 });
    await vi.waitFor(() => expect(total()).toBeGreaterThanOrEqual(start + 3), { timeout: 5000, interval: 20 });
    api.sim.controls.stopMutator();
    const stopped = total();
    await api.get('media?limit=1');
    expect(total()).toBe(stopped);
    await fetch(`${api.sim.url}/__sim/mutator/start`, {
      method: 'POST',
      body: JSON.stringify({ tenant: api.tenant, perSecond: 50 }),
    });
    await fetch(`${api.sim.url}/__sim/mutator/stop`, { method: 'POST' });
  });

  it('closes idempotently, with keep-alive sockets open', async () => {
    const api = await openSim({}, false);
    await api.get('series');
    await Promise.all([api.sim.close(), api.sim.close()]);
    await api.sim.close();
    await expect(fetch(`${api.base}/series`)).rejects.toThrow();
  });
});
