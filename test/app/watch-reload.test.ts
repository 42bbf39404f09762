import { readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COLLECTIONS as COLLECTION_SLUGS } from '../../src/vocabulary/collections.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { type WatchRig, watchRig } from './watch-harness.js';

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

/** The collections the simulator's mutator changes in turn (all but custom attributes), as the outside check's. */
const COLLECTIONS = COLLECTION_SLUGS.filter((c) => c !== 'custom-attributes');
const MINUTE = 60_000;

/** Sets every tenant's watch knobs in the rig's config file. */
function setWatch(rig: WatchRig, watch: Record<string, unknown>): void {
  const config = JSON.parse(readFileSync(rig.configPath, 'utf8')) as { tenants: Record<string, unknown>[] };
  for (const t of config.tenants) t.watch = watch;
  writeFileSync(rig.configPath, JSON.stringify(config));
}

/** Reads (GET) of a tenant's key the simulator answered in [from, to). */
const readsBetween = (rig: WatchRig, slug: string, from: number, to: number): number =>
  rig.sim.controls
    .requestLog()
    .filter((e) => e.tenant === slug && e.method === 'GET' && Date.parse(e.at) >= from && Date.parse(e.at) < to).length;

describe('understudy worker with watch on: a reload', () => {
  it('applies a lowered maxShare at the next turns: each whole minute after SIGHUP stays within the new share', async () => {
    const rig = await watchRig(server.url, { records: 20, collections: COLLECTIONS });
    const [a] = rig.tenants;
    if (!a) throw new Error('a tenant expected');
    await rig.firstSync();
    setWatch(rig, { maxShare: 0.6, hot: '2s' });
    const worker = rig.worker();
    await rig.bothWatched();
    // The outside check's load: 2 ticks a second, each a create, 2 edits and a delete, over the collections in turn.
    rig.sim.controls.startMutator({ tenant: a.slug, perSecond: 2, creates: 1, edits: 2, deletes: 1 });
    try {
      await sleep(20_000 + MINUTE);
      setWatch(rig, { maxShare: 0.3, hot: '2s' });
      worker.child.kill('SIGHUP');
      const reloadedAt = Date.now();
      await worker.waitForLog(/config reloaded/, 10_000);
      await sleep(2 * MINUTE);
      const before = readsBetween(rig, a.slug, reloadedAt - MINUTE, reloadedAt);
      const first = readsBetween(rig, a.slug, reloadedAt, reloadedAt + MINUTE);
      const second = readsBetween(rig, a.slug, reloadedAt + MINUTE, reloadedAt + 2 * MINUTE);
      console.info(JSON.stringify({ readsPerMinute: { before, first, second } }));
      // Premise: under load, watch used more than the new share allows before the reload.
      expect(before).toBeGreaterThan(35);
      // maxShare 0.3 of 100 reads a minute, and 2 for turns under way.
      expect(first).toBeLessThanOrEqual(32);
      expect(second).toBeLessThanOrEqual(32);
    } finally {
      rig.sim.controls.stopMutator();
    }
    expect(rig.sim.controls.counters().total.rateLimited).toBe(0);
    const end = await worker.stop();
    expect(end.code, end.stderr.slice(-2000)).toBe(0);
  }, 300_000);
});
