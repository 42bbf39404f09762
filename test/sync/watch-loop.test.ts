import { describe, expect, it } from 'vitest';
import { discoverRoutes, type ReadRoutes } from '../../src/sync/discover-routes.js';
import { syncTenant } from '../../src/sync/sync-tenant.js';
import { type WatchDeps, type WatchedTenant, watchTenants } from '../../src/sync/watch-loop.js';
import { systemClock } from '../../src/vocabulary/clock.js';
import { DEFAULT_WATCH } from '../../src/vocabulary/watch-knobs.js';
import { type SteppedClock, steppedClock } from '../helpers/stepped-clock.js';
import { type Harness, silentLog, syncHarness } from '../helpers/sync-harness.js';

/** A watch of the harness's tenant on events and series, as one process would run it, on the test's clock. */
function watcher(h: Harness, clock: SteppedClock, routes: ReadRoutes, holder: string, probes: string[]) {
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
    clock,
    // The first probes come halfway through their spread (2 s for two collections): at 1 s.
    random: () => 0.5,
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
    // The watch's timers and the mirror's leases run on one clock, which moves only when the test says.
    const clock = steppedClock(h.clock);
    const routes = await discoverRoutes(h.client, { signal: AbortSignal.timeout(5000) });
    await syncTenant(
      h.deps({ clock: systemClock }),
      { ...h.target, collections: ['events', 'series'] },
      'incremental',
      AbortSignal.timeout(20_000),
      routes,
    );
    const probes: string[] = [];
    const a = watcher(h, clock, routes, 'host-a', probes);
    const b = watcher(h, clock, routes, 'host-b', probes);
    await clock.advance(999);
    expect(probes).toEqual([]);
    await clock.advance(1);
    expect(probes).toHaveLength(2);
    const owners = () =>
      h.query<{ holder: string }>(
        'SELECT holder FROM watch_owners WHERE expires_at > ?',
        new Date(h.clock.now()).toISOString(),
      );
    expect(owners().length).toBe(1);
    const first = owners()[0]?.holder as string;
    expect(probes.sort()).toEqual([`${first} events quiet`, `${first} series quiet`]);
    // Quiet: probed again at the idle interval (2 s), by the owner only.
    await clock.advance(2000);
    expect(probes).toHaveLength(4);
    expect(new Set(probes.map((p) => p.split(' ')[0]))).toEqual(new Set([first]));

    const m = h.sim.controls.mutate({ tenant: h.tenant.slug, collection: 'events', edits: 1 });
    const version = () =>
      h.query<{ updated_at: string }>('SELECT updated_at FROM events WHERE id = ?', m.edited[0])[0]?.updated_at;
    const upstream = h.upstream('events').find((d) => String(d.id) === m.edited[0])?.updatedAt;
    await clock.advance(2000);
    expect(probes.at(-2)).toBe(`${first} events changed`);
    expect(Date.parse(version() ?? '')).toBe(Date.parse(String(upstream)));

    // The owner stops; the other takes the tenant over within a claim (225 ms) and a takeover's spread (5 s, half).
    const [owner, other] = first === 'host-a' ? [a, b] : [b, a];
    await owner.stop();
    const second = first === 'host-a' ? 'host-b' : 'host-a';
    const before = probes.length;
    await clock.advance(3000);
    expect(probes.slice(before).map((p) => p.split(' ')[0])).toEqual([second, second]);
    expect(owners().map((o) => o.holder)).toEqual([second]);
    await clock.advance(5000);
    const rows = h.query<{ collection: string; holder: string }>(
      'SELECT collection, holder FROM watch_state ORDER BY collection',
    );
    expect(rows).toEqual([
      { collection: 'events', holder: second },
      { collection: 'series', holder: second },
    ]);
    await other.stop();
  });
});
