import type { Env, Hono, Schema } from 'hono';
import { swaggerAsset, swaggerUiHtml } from '../swagger-ui.js';

/** Where the page is served; its assets are under it (`/v1/docs/swagger-ui.css`). */
export const DOCS_PATH = '/v1/docs';

/**
 * Mounts `GET /v1/docs` (Swagger UI rendering the document at `specUrl`) and its assets on `app`, served from
 * swagger-ui-dist in node_modules: no CDN, nothing fetched from elsewhere.
 */
export function mountDocs<E extends Env, S extends Schema, B extends string>(
  app: Hono<E, S, B>,
  specUrl = '/v1/openapi.json',
): void {
  const html = swaggerUiHtml({ title: 'understudy serve - API', assetBase: DOCS_PATH, specUrl });
  app.get(DOCS_PATH, (c) => c.html(html));
  app.get(`${DOCS_PATH}/:asset`, async (c) => {
    const asset = await swaggerAsset(c.req.param('asset') ?? '');
    if (!asset) return c.notFound();
    return c.body(new Uint8Array(asset.body), 200, { 'content-type': asset.type, 'cache-control': 'max-age=3600' });
  });
}
