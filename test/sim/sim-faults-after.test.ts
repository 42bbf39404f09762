import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/vocabulary/ids.js';
import { openSim } from './sim-helpers.js';

const countBySlug = async (api: Awaited<ReturnType<typeof openSim>>, slug: string) =>
  (await api.get(`series?draft=true&depth=0&limit=0&where[slug][equals]=${slug}`)).json.totalDocs;

describe('faults with after: true', () => {
  it('applies the write, then answers with the injected status', async () => {
    const api = await openSim();
    api.sim.controls.injectFaults({ kind: 'status', status: 504, after: true, count: 1, match: { method: 'POST' } });
    const r = await api.req('POST', 'series', { title: 'Applied anyway', slug: 'applied-anyway' });
    expect(r.status).toBe(504);
    expect(r.json).toEqual({ errors: [{ message: 'Service Unavailable' }] });
    expect(await countBySlug(api, 'applied-anyway')).toBe(1);
    // Spent: the next write is answered normally.
    expect((await api.req('POST', 'series', { title: 'Second', slug: 'second' })).status).toBe(201);
  });

  it('applies the write, then drops the connection (reset) or breaks the body (malformed)', async () => {
    const api = await openSim();
    api.sim.controls.injectFaults({ kind: 'reset', after: true, count: 1, match: { method: 'POST' } });
    await expect(api.req('POST', 'series', { title: 'Cut off', slug: 'cut-off' })).rejects.toThrow();
    expect(await countBySlug(api, 'cut-off')).toBe(1);
    api.sim.controls.injectFaults({ kind: 'malformed', after: true, count: 1, match: { method: 'POST' } });
    await expect(api.req('POST', 'series', { title: 'Half body', slug: 'half-body' })).rejects.toThrow();
    expect(await countBySlug(api, 'half-body')).toBe(1);
  });

  it('takes after: true over the control route, and refuses it for kinds that answer before handling', async () => {
    const api = await openSim();
    const post = (body: unknown) =>
      fetch(`${api.sim.url}/__sim/faults`, { method: 'POST', body: JSON.stringify(body) });
    const ok = await post({ kind: 'status', status: 502, after: true, count: 1, match: { method: 'POST' } });
    expect(((await ok.json()) as JsonObject).pending).toBe(1);
    expect((await api.req('POST', 'series', { title: 'Over http', slug: 'over-http' })).status).toBe(502);
    expect(await countBySlug(api, 'over-http')).toBe(1);
    expect((await post({ kind: 'latency', after: true, count: 1 })).status).toBe(400);
  });
});
