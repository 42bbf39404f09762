import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COLLECTIONS, DOCUMENTED_ROUTES } from '../../src/vocabulary/collections.js';
import type { JsonObject } from '../../src/vocabulary/ids.js';
import { type Api, docsOf, openSim } from './sim-helpers.js';

let api: Api;
beforeAll(async () => {
  api = await openSim({}, false);
});
afterAll(() => api.sim.close());

describe('authentication', () => {
  const forms: [string, (k: string) => Record<string, string>][] = [
    ['no header', () => ({ authorization: '' })],
    ['Bearer', (k) => ({ authorization: `Bearer ${k}` })],
    ['API-Key without users', (k) => ({ authorization: `API-Key ${k}` })],
    ['lower-case users api-key', (k) => ({ authorization: `users api-key ${k}` })],
    ['two spaces', (k) => ({ authorization: `users API-Key  ${k}` })],
    ['base64 key', (k) => ({ authorization: `users API-Key ${Buffer.from(k).toString('base64')}` })],
    ['unknown key', () => ({ authorization: 'users API-Key sk_nothing_like_a_real_key_000' })],
  ];
  for (const [name, header] of forms) {
    it(`refuses ${name} with 401 and the spec's body`, async () => {
      const r = await api.req('GET', 'series', undefined, header(api.key));
      expect(r.status).toBe(401);
      expect(r.json).toEqual({ error: 'Unauthorized', message: 'Valid API key required' });
    });
  }

  it("refuses a key on another tenant's path with 401", async () => {
    const other = api.sim.tenants[1];
    const r = await api.req('GET', `${api.sim.url}/partners/2026-02/${other?.slug}/series`);
    expect(r.status).toBe(401);
    expect(r.json.error).toBe('Unauthorized');
  });

  it('answers /api with an API key with the 403 body', async () => {
    const r = await api.req('GET', `${api.sim.url}/api/series`);
    expect(r.status).toBe(403);
    expect(r.json).toEqual({
      error: 'Forbidden',
      message: 'API keys must use the Partners API at /partners/:version/:tenant/*',
    });
  });

  it('answers an unknown version with a JSON 404', async () => {
    const r = await api.req('GET', `${api.sim.url}/partners/2025-01/${api.tenant}/series`);
    expect(r.status).toBe(404);
    expect(Array.isArray(r.json.errors)).toBe(true);
  });

  it('generates distinct readable slugs and long keys', () => {
    const [a, b] = api.sim.tenants;
    expect(a?.slug).toMatch(/^[a-z]+(-[a-z]+)+$/);
    expect(a?.slug).not.toBe(b?.slug);
    expect(a?.slug).not.toMatch(/tenant|key/);
    expect(a?.key).toMatch(/^[A-Za-z0-9_-]{24,}$/);
  });
});

describe('public routes', () => {
  it('serves an OpenAPI 3.1 document that a validator accepts, at both paths', async () => {
    for (const p of ['/partners/openapi', '/partners/2026-02/openapi']) {
      const r = await fetch(`${api.sim.url}${p}`);
      expect(r.status).toBe(200);
      const doc = (await r.json()) as JsonObject;
      expect(String(doc.openapi)).toMatch(/^3\.1/);
      const res = await new Validator().validate(doc as Record<string, unknown>);
      expect(res.errors ?? []).toEqual([]);
      expect(res.valid).toBe(true);
    }
  });

  it('serves Swagger UI with its assets from the simulator itself', async () => {
    const html = await (await fetch(`${api.sim.url}/partners/docs`)).text();
    expect(html).toContain('<html');
    expect(html).not.toMatch(/https?:\/\/(cdn|unpkg)/);
    const js = await fetch(`${api.sim.url}/partners/docs/swagger-ui-bundle.js`);
    expect(js.status).toBe(200);
    expect((await js.text()).length).toBeGreaterThan(1000);
  });

  it('answers GraphQL GET with Accept text/html with a GraphiQL page, and other GraphQL with 501', async () => {
    const page = await fetch(`${api.base}/graphql`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('GraphiQL');
    const q = await api.req('POST', 'graphql', { query: '{ __typename }' });
    expect(q.status).toBe(501);
    expect(q.json.errors).toBeDefined();
    const noKey = await fetch(`${api.base}/graphql`, { method: 'POST' });
    expect(noKey.status).toBe(401);
  });

  it('delivers media at their url', async () => {
    const m = docsOf(await api.get('media?limit=1'))[0] as JsonObject;
    expect(m.id).toBeUndefined();
    const img = await fetch(String(m.url));
    expect(img.status).toBe(200);
    expect(img.headers.get('content-type')).toBe('image/png');
  });
});

describe('route sets', () => {
  it('full serves list and get-by-id for all 13 collections', async () => {
    for (const c of COLLECTIONS) {
      const list = await api.get(`${c}?limit=1&depth=0`);
      expect(list.status, c).toBe(200);
      const doc = docsOf(list)[0] as JsonObject;
      const id = c === 'media' ? doc.filename : doc.id;
      const one = await api.get(`${c}/${encodeURIComponent(String(id))}?depth=0`);
      expect(one.status, c).toBe(200);
      expect(one.json.updatedAt).toBe(doc.updatedAt);
    }
  });

  it('documented serves exactly the spec table, and the OpenAPI document lists exactly those routes', async () => {
    const doc = await openSim({ routes: 'documented' });
    const ids: Record<string, string> = {};
    for (const c of COLLECTIONS) {
      const d = doc.sim.controls.docs(doc.tenant, c)[0] as JsonObject;
      ids[c] = String(c === 'media' ? d.filename : d.id);
    }
    for (const c of COLLECTIONS) {
      const ops = DOCUMENTED_ROUTES[c];
      const list = await doc.get(`${c}?limit=1`);
      expect(list.status === 200, `${c} list`).toBe(ops.includes('list'));
      const one = await doc.get(`${c}/${encodeURIComponent(ids[c] as string)}`);
      expect(one.status === 200, `${c} get`).toBe(ops.includes('get'));
      if (!ops.includes('get')) expect([404, 405]).toContain(one.status);
    }
    const oa = (await (await fetch(`${doc.sim.url}/partners/openapi`)).json()) as { paths: Record<string, object> };
    const served = Object.entries(oa.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m} ${p}`));
    expect(served).toContain('get /{version}/{tenant}/series');
    expect(served).toContain('patch /{version}/{tenant}/event-instances/{id}');
    expect(served).toContain('put /{version}/{tenant}/media/{filename}');
    expect(served).toContain('patch /{version}/{tenant}/blogs/theme-settings');
    expect(served).toContain('get /{version}/{tenant}/events/theme-settings/schema');
    expect(served).not.toContain('get /{version}/{tenant}/event-instances');
    const dataRoutes = served.filter((s) => s.includes('{tenant}') && !s.endsWith('/graphql'));
    const expected =
      Object.values(DOCUMENTED_ROUTES).reduce((n, ops) => n + ops.length, 0) + 3 /* bulk */ + 1; /* schema */
    expect(dataRoutes).toHaveLength(expected);
    const full = (await (await fetch(`${api.sim.url}/partners/openapi`)).json()) as { paths: Record<string, object> };
    expect(Object.keys(full.paths)).toContain('/{version}/{tenant}/event-instances');
  });

  it('answers a known path with a method it does not serve with 405, and unknown paths with 404', async () => {
    const r = await api.req('PUT', 'event-instances/abc', {});
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toContain('PATCH');
    expect((await api.get('nothing-here')).status).toBe(404);
    expect((await api.get('series/x/y/z')).status).toBe(404);
  });

  it('serves the events theme-settings schema', async () => {
    const r = await api.get('events/theme-settings/schema');
    expect(r.status).toBe(200);
    expect(r.json.configurationAvailable).toBe(true);
    const f = (r.json.fields as JsonObject[])[0] as JsonObject;
    expect(Object.keys(f).sort()).toEqual(
      ['customObjectType', 'fields', 'hasMany', 'key', 'label', 'options', 'relationTo', 'type'].sort(),
    );
  });
});

describe('data shapes', () => {
  it('gives every event instance all three ticketing objects, a time zone and consistent relationships', async () => {
    const all = await api.get('event-instances?pagination=false&depth=0');
    const events = new Set(api.sim.controls.docs(api.tenant, 'events').map((d) => d.id));
    // Instances may point at a venue that was never published (invisible to published reads): draft=true lists all.
    const venues = new Set(docsOf(await api.get('venues?draft=true&limit=0&depth=0')).map((d) => d.id));
    expect(docsOf(all).length).toBe(36);
    for (const d of docsOf(all)) {
      expect(events.has(d.event as string)).toBe(true);
      expect(venues.has(d.venue as string)).toBe(true);
      expect(d.startDate_tz).toMatch(/^[A-Z][a-z]+\/[A-Za-z_]+$/);
      expect(Object.keys(d.ticketingA as JsonObject)).toEqual(
        expect.arrayContaining([
          'performanceId',
          'productionSeasonId',
          'keywords',
          'availability',
          'customAttributeSyncOverride',
        ]),
      );
      expect(d.ticketingB).toHaveProperty('showTimeId');
      expect(d.ticketingC).toHaveProperty('instanceId');
      expect(Date.parse(d.createdAt as string)).toBeLessThanOrEqual(Date.parse(d.updatedAt as string));
      expect(d.updatedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
  });

  it('has one custom-attribute record and venues with opening hours', async () => {
    expect(api.sim.controls.docs(api.tenant, 'custom-attributes')).toHaveLength(1);
    const v = (await api.get('venues?limit=1&depth=0')).json.docs as JsonObject[];
    expect((v[0] as JsonObject).openingHours).toHaveProperty('timezone');
  });
});
