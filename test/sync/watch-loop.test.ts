import { describe, expect, it } from 'vitest';
import { discoverRoutes, type ReadRoutes } from '../../src/sync/discover-routes.js';
import { syncTenant } from '../../src/sync/sync-tenant.js';
import { type WatchDeps, type WatchedTenant, watchTenants } from '../../src/sync/watch-loop.js';
import { systemClock } from '../../src/vocabulary/clock.js';
import { DEFAULT_WATCH } from '../../src/vocabulary/watch-knobs.js';
import { type Harness, silentLog, syncHarness } from '../helpers/sync-harness.js';

const until = async (what: string, ok: () => boolean, ms = 15_000) => {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

/** A watch of the harness's tenant on events and series, as one process would run it. */
function watcher(h: Harness, routes: ReadRoutes, holder: string, probes: string[]) {
  const tenant: WatchedTenant = {
    target: { ...h.target, collections: ['events', 'series'] },
    client: h.client,
    knobs: { ...DEFAULT_WATCH, hotMs: 4000 },
    budget: { reads: 1000, writes: 20, windowMs: 60_000 },
    keyId: 'k',
  };
  const deps: WatchDeps = {
    tenants: () => [tenant],
    syncDeps: (client) => h.deps({ client, clock: systemClock }),
    rows: h.watch,
    routesOf: async () => routes,
    log: silentLog,
    holder,
    ownerTtlMs: 900,
    onProbe: (e) => probes.push(`${holder} ${e.collection} ${e.outcome}`),
  };
  const stop = new AbortController();
  const done = watchTenants(deps, stop.signal);
  return {
    stop: () => {
      stop.abort();
      return done;
    },
  };
}

describe('watch loop', () => {
  it('keeps a tenant live, one watcher at a time, and hands it over when that watcher stops', async () => {
    const h = await syncHarness({ records: 20 });
    // The store's clock must run for the tenant leases to expire.
    const follow = () => h.clock.advance(Math.max(0, Date.now() - h.clock.now()));
    const tick = setInterval(follow, 20);
    try {
      const routes = await discoverRoutes(h.client, { signal: AbortSignal.timeout(5000) });
      await syncTenant(
        h.deps({ clock: systemClock }),
        { ...h.target, collections: ['events', 'series'] },
        'incremental',
        AbortSignal.timeout(20_000),
        routes,
      );
      const probes: string[] = [];
      const a = watcher(h, routes, 'host-a', probes);
      const b = watcher(h, routes, 'host-b', probes);
      await until('two probes', () => probes.length >= 2);
      const owners = () =>
        h.query<{ holder: string }>('SELECT holder FROM watch_owners WHERE expires_at > ?', new Date().toISOString());
      expect(owners().length).toBe(1);
      const first = owners()[0]?.holder as string;
      // Only the owner probes.
      expect(new Set(probes.map((p) => p.split(' ')[0]))).toEqual(new Set([first]));
      const m = h.sim.controls.mutate({ tenant: h.tenant.slug, collection: 'events', edits: 1 });
      const version = () =>
        h.query<{ updated_at: string }>('SELECT updated_at FROM events WHERE id = ?', m.edited[0])[0]?.updated_at;
      const upstream = h.upstream('events').find((d) => String(d.id) === m.edited[0])?.updatedAt;
      await until('the edit in the mirror', () => Date.parse(version() ?? '') === Date.parse(String(upstream)));
      // The owner stops; the other takes the tenant over and keeps it live.
      const [owner, other] = first === 'host-a' ? [a, b] : [b, a];
      await owner.stop();
      const second = first === 'host-a' ? 'host-b' : 'host-a';
      const before = probes.length;
      await until('the other host probing', () => probes.slice(before).some((p) => p.startsWith(second)), 10_000);
      expect(owners().map((o) => o.holder)).toEqual([second]);
      const rows = h.query<{ collection: string; holder: string; interval_ms: number; last_probe_at: string }>(
        'SELECT collection, holder, interval_ms, last_probe_at FROM watch_state ORDER BY collection',
      );
      expect(rows.map((r) => r.collection)).toEqual(['events', 'series']);
      await other.stop();
    } finally {
      clearInterval(tick);
    }
  }, 40_000);
});
