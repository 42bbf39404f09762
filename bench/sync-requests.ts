/**
 * Request cost of sync: a full sync of N records must cost at most ceil(N/L)+2 requests per listable collection
 * (L = the page size the upstream accepts), an incremental sync with k changes at most ceil(k/L)+2.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../src/app/create-app.js';
import { parseConfig } from '../src/config/load-config.js';
import { createLogger } from '../src/log.js';
import { startSimulator } from '../src/sim/start-simulator.js';
import { discoverRoutes } from '../src/sync/discover-routes.js';
import { syncCollection } from '../src/sync/sync-collection.js';
import { tenantSlug } from '../src/vocabulary/ids.js';

export default async function bench(): Promise<string> {
  const L = 100;
  const sim = await startSimulator({
    tenants: 1,
    records: 400,
    routes: 'full',
    maxLimit: L,
    readLimit: 0,
    writeLimit: 0,
  });
  const dir = mkdtempSync(join(tmpdir(), 'understudy-bench-'));
  const t = sim.tenants[0];
  if (!t) throw new Error('no tenant');
  const log = createLogger({ level: 'silent' });
  // The product's composition root: its one pool, the tenant's client and gate, the mirror.
  const app = await createApp(
    parseConfig({
      baseUrl: sim.url,
      tenants: [{ slug: t.slug, apiKeyEnv: 'BENCH_KEY', rateLimit: { reads: 1e9, writes: 1e9, windowMs: 1000 } }],
    }),
    { BENCH_KEY: t.key },
    { log, database: join(dir, 'm.db') },
  );
  try {
    const client = app.tenants()[0]?.client;
    if (!client) throw new Error('no client');
    const deps = { client, store: app.store, log };
    const target = { slug: tenantSlug(t.slug) };
    const signal = new AbortController().signal;
    const routes = await discoverRoutes(client, { signal });
    const rows: string[] = [];
    let ok = true;
    for (const c of ['series', 'events', 'event-instances', 'organizations', 'media'] as const) {
      const n = sim.controls.docs(t.slug, c).length;
      const full = await syncCollection(deps, target, c, 'full', routes, signal);
      const fullBound = Math.ceil(n / L) + 2 + (c === 'events' ? 1 : 0); // events also fetch their theme-settings schema
      const k = Math.min(n, 250);
      // Edits of records that exist only as drafts are invisible to published reads: counted are the published
      // records whose updatedAt moved.
      const before = new Map(sim.controls.docs(t.slug, c).map((d) => [String(d.id ?? d.filename), d.updatedAt]));
      sim.controls.mutate({ tenant: t.slug, collection: c, edits: k });
      const visible = sim.controls
        .docs(t.slug, c)
        .filter((d) => before.get(String(d.id ?? d.filename)) !== d.updatedAt).length;
      const inc = await syncCollection(deps, target, c, 'incremental', routes, signal);
      const incBound = Math.ceil(k / L) + 2 + (c === 'events' ? 1 : 0);
      ok &&= full.requests <= fullBound && inc.requests <= incBound && inc.updated === visible;
      rows.push(
        `| ${c} | ${n} | ${full.requests} | ${fullBound} | ${k} (${visible} published) | ${inc.requests} | ${incBound} | ${inc.updated} |`,
      );
    }
    return [
      '## Sync request cost',
      '',
      `Simulator with \`maxLimit\` ${L} (sync asks for 1000 and follows the clamped value). ${ok ? 'Every collection within bounds.' : '**Some collection over its bound.**'}`,
      '',
      '| collection | N | full requests | bound ceil(N/L)+2 | k changed | incremental requests | bound ceil(k/L)+2 | updated |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      ...rows,
      '',
      'The `events` bound has one more request: its theme-settings schema is mirrored with it.',
    ].join('\n');
  } finally {
    await app.close();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
