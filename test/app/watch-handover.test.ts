import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CollectionSlug } from '../../src/vocabulary/collections.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { parsePrometheus } from '../ops/parse-prometheus.js';
import { metricsOf, type WatchRig, watchRig } from './watch-harness.js';

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

const COLLECTIONS: readonly CollectionSlug[] = ['events', 'series', 'venues'];
/**
 * One watcher's quiet cadence here: 3 collections on a key of 100 reads a minute, probed within 80% of idleShare
 * (0.2), so each every 3 × 60 s / 16 = 11.25 s.
 */
const IDLE_MS = 11_250;
/** The default lease of a tenant's watch, and how often the other workers try to take it (a third of it). */
const LEASE_MS = 30_000;
const CLAIM_MS = LEASE_MS / 3;

/** The live holder of each tenant's watch (`watch_owners`), by tenant. */
const owners = (rig: WatchRig): Map<string, string> =>
  new Map(
    rig
      .query<{ tenant: string; holder: string }>(
        'SELECT tenant, holder FROM watch_owners WHERE expires_at > ?',
        new Date().toISOString(),
      )
      .map((r) => [r.tenant, r.holder]),
  );

/** The pid a holder names (host:pid:run). */
const pidOf = (holder: string | undefined): number => Number(holder?.split(':')[1]);

/** The probes (`limit=100`, newest first) the simulator answered for a tenant's collection between two instants. */
const probesBetween = (rig: WatchRig, slug: string, c: CollectionSlug, from: number, to: number): number =>
  rig.sim.controls
    .requestLog()
    .filter(
      (e) =>
        e.tenant === slug &&
        e.path.includes(`/${slug}/${c}?limit=100&sort=-updatedAt`) &&
        Date.parse(e.at) >= from &&
        Date.parse(e.at) < to,
    ).length;

/** The tenants whose collections a worker's /metrics counts watch turns of. */
const probedBy = async (port: number): Promise<Set<string>> =>
  new Set(
    parsePrometheus(await metricsOf(port))
      .samples.filter((s) => s.name === 'understudy_watch_probes_total' && s.value > 0)
      .map((s) => s.labels.tenant ?? ''),
  );

describe('watch across two worker processes on one mirror', () => {
  it('one worker probes each tenant; a worker killed with -9 hands its tenants to the other within a lease', async () => {
    const rig = await watchRig(server.url, { records: 40, collections: COLLECTIONS });
    const [a, b] = rig.tenants;
    if (!a || !b) throw new Error('two tenants expected');
    await rig.firstSync();
    const workers = [rig.worker('--http', '0'), rig.worker('--http', '0')];
    const ports = await Promise.all(workers.map(async (w) => (await w.opsPort()).port));
    await vi.waitFor(() => expect(owners(rig).size).toBe(2), { timeout: 20_000, interval: 200 });
    const claimed = Date.now();
    const held = owners(rig);
    const pids = workers.map((w) => w.pid);
    for (const t of rig.tenants) expect(pids).toContain(pidOf(held.get(t.slug)));

    // Steady and quiet: over 30 s, each collection probed at one watcher's cadence (two would probe it twice as
    // often), each tenant's turns counted by its holder alone, and `watch_state` naming that holder.
    const from = claimed + 12_000;
    const to = from + 30_000;
    await sleep(to - Date.now());
    for (const t of rig.tenants)
      for (const c of COLLECTIONS)
        expect(probesBetween(rig, t.slug, c, from, to), `${t.slug}/${c}`).toBeLessThanOrEqual(
          Math.ceil(30_000 / IDLE_MS),
        );
    const seen = await Promise.all(ports.map(probedBy));
    for (const t of rig.tenants) {
      const holderIndex = pids.indexOf(pidOf(held.get(t.slug)));
      expect(seen[holderIndex]?.has(t.slug), `${t.slug} probed by its holder`).toBe(true);
      expect(seen[1 - holderIndex]?.has(t.slug), `${t.slug} left alone by the other`).toBe(false);
      const states = rig.query<{ holder: string }>('SELECT DISTINCT holder FROM watch_state WHERE tenant = ?', t.slug);
      expect(states.map((s) => s.holder)).toEqual([held.get(t.slug)]);
    }
    expect(owners(rig)).toEqual(held);

    // Tenant A's holder dies; an edit made just after reaches the mirror through the other worker.
    const victim = pids.indexOf(pidOf(held.get(a.slug)));
    const survivor = workers[1 - victim];
    await workers[victim]?.stop('SIGKILL');
    const killedAt = Date.now();
    const { edited } = rig.sim.controls.mutate({ tenant: a.slug, collection: 'events', edits: 1 });
    const id = edited[0] ?? '';
    const upstream = rig.upstream(a.slug, 'events')[id];
    await vi.waitFor(() => expect(pidOf(owners(rig).get(a.slug))).toBe(survivor?.pid), {
      timeout: LEASE_MS + CLAIM_MS + 5000,
      interval: 200,
    });
    const takenOver = Date.now() - killedAt;
    // What the issue promises: the watch handed over within a lease period. Soft, so the rest still runs: the
    // killed lease may have up to 30 s left, and the survivor asks for it only every 10 s.
    expect.soft(takenOver, 'taken over within a lease period').toBeLessThanOrEqual(LEASE_MS);
    // Taken over, then its collections first probed spread over their idle interval.
    await vi.waitFor(() => expect(rig.mirrored(a.slug, 'events')[id]).toBe(upstream), {
      timeout: LEASE_MS + CLAIM_MS + IDLE_MS + 5000,
      interval: 200,
    });
    const mirroredAfter = Date.now() - killedAt;
    expect.soft(mirroredAfter, 'edit after the kill mirrored within 45 s').toBeLessThanOrEqual(45_000);
    expect(await probedBy(ports[1 - victim] ?? 0)).toContain(a.slug);
    for (const t of rig.tenants) expect(pidOf(owners(rig).get(t.slug))).toBe(survivor?.pid);
    expect(rig.sim.controls.counters().total.rateLimited).toBe(0);

    const end = await survivor?.stop();
    expect(end?.code, end?.stderr.slice(-2000)).toBe(0);
    console.info(JSON.stringify({ takenOverMs: takenOver, mirroredAfterMs: mirroredAfter }));
  }, 150_000);
});
