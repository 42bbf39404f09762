import { swaggerUiHtml } from '../swagger-ui.js';

/** Swagger UI of the simulator's description (its assets are served under `/partners/docs`). */
export const swaggerHtml = (specUrl: string): string =>
  swaggerUiHtml({ title: 'Content Partners API (simulator) - Swagger UI', assetBase: '/partners/docs', specUrl });

/** A self-contained GraphiQL-style page: the simulator does not execute GraphQL, and the page says so. */
export const graphiqlHtml = (endpoint: string): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>GraphiQL</title>
<style>
body{margin:0;font-family:system-ui,sans-serif;display:flex;flex-direction:column;height:100vh}
header{background:#1e1e2e;color:#fff;padding:8px 16px}
main{display:flex;flex:1}
textarea,pre{flex:1;margin:0;padding:12px;font-family:ui-monospace,monospace;border:1px solid #ddd}
button{margin:8px;padding:6px 16px}
</style>
</head>
<body>
<header>GraphiQL &middot; ${endpoint} <button id="run">Run</button></header>
<main><textarea id="q">{\n  __typename\n}</textarea><pre id="out"></pre></main>
<script>
document.getElementById('run').onclick = async () => {
  const r = await fetch(${JSON.stringify(endpoint)}, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: document.getElementById('q').value }) });
  document.getElementById('out').textContent = r.status + '\\n' + await r.text();
};
</script>
</body>
</html>
`;

/** A 1x1 transparent PNG: what every media delivery URL returns. */
export const PIXEL_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);
