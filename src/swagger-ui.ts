import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * Swagger UI, served from swagger-ui-dist in node_modules (no CDN): the page and its two assets, for every part that
 * renders an OpenAPI document (the simulator's `/partners/docs`, serve's `/v1/docs`).
 */

/** Where the page is: its title, the path its assets are served under, and the document it renders. */
export interface SwaggerPage {
  readonly title: string;
  /** The path the assets are served under, without a trailing slash (`/partners/docs`). */
  readonly assetBase: string;
  readonly specUrl: string;
}

export const swaggerUiHtml = ({ title, assetBase, specUrl }: SwaggerPage): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${title}</title>
<link rel="stylesheet" href="${assetBase}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${assetBase}/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: ${JSON.stringify(specUrl)}, dom_id: '#swagger-ui' });</script>
</body>
</html>
`;

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
};

// Node caches the lookup (its path cache), so resolving per request needs no state of our own.
const assetDir = (): string => dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** A Swagger UI asset by file name, or undefined if it is not one of the served files. */
export async function swaggerAsset(name: string): Promise<{ body: Buffer; type: string } | undefined> {
  const type = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
  if (!type) return undefined;
  return { body: await readFile(join(assetDir(), name)), type };
}
