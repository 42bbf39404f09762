import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { mountDocs } from '../../src/serve/docs-page.js';

describe('GET /v1/docs', () => {
  const app = new Hono();
  mountDocs(app);

  it('renders the description with Swagger UI served from the package itself, no CDN', async () => {
    const r = await app.request('/v1/docs');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await r.text();
    expect(html).toContain('url: "/v1/openapi.json"');
    expect(html).not.toMatch(/https?:\/\//);
    for (const asset of html.matchAll(/(?:src|href)="([^"]+)"/g)) {
      const a = await app.request(asset[1] ?? '');
      expect(a.status, asset[1]).toBe(200);
      expect((await a.text()).length).toBeGreaterThan(1000);
    }
    expect((await app.request('/v1/docs/swagger-ui-bundle.js')).headers.get('content-type')).toMatch(/javascript/);
  });

  it('serves only its own assets', async () => {
    for (const name of ['package.json', 'constructor', '..%2Fpackage.json'])
      expect((await app.request(`/v1/docs/${name}`)).status, name).toBe(404);
  });

  it('renders another document when told where it is', async () => {
    const other = new Hono();
    mountDocs(other, '/api/spec.json');
    expect(await (await other.request('/v1/docs')).text()).toContain('url: "/api/spec.json"');
  });
});
