import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { API_VERSION, type CollectionSlug } from '../../src/vocabulary/collections.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { peakReadsPerMinute, type WatchRig, watchRig } from './watch-harness.js';

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

/** Event instances number 3 × 40 here: more than one probe lists, so the rotation reads their oldest records. */
const COLLECTIONS: readonly CollectionSlug[] = ['seasons', 'series', 'events', 'event-instances'];
/** Watch's `all` target (the default): every change mirrored within it. */
const ALL_MS = 120_000;

/** A hard delete upstream, as an editor makes it (the simulator's DELETE route, with the tenant's key). */
async function hardDelete(rig: WatchRig, tenant: { slug: string; key: string }, c: CollectionSlug, id: string) {
  const r = await fetch(`${rig.sim.url}/partners/${API_VERSION}/${tenant.slug}/${c}/${id}`, {
    method: 'DELETE',
    headers: { authorization: `users API-Key ${tenant.key}` },
  });
  expect(r.status).toBe(200);
}

/** A tenant's records of a collection, oldest first (ids). */
const byAge = (rig: WatchRig, slug: string, c: CollectionSlug): string[] =>
  Object.entries(rig.upstream(slug, c))
    .filter(([, at]) => at !== null)
    .sort(([a, x], [b, y]) => Date.parse(x as string) - Date.parse(y as string) || a.localeCompare(b))
    .map(([id]) => id);

describe('understudy worker with watch on: what the count alone cannot see', () => {
  it('finds a late create cancelled by a delete, and the delete of a record dated in the future, within `all`, inside idleShare', async () => {
    const rig = await watchRig(server.url, { records: 40, collections: COLLECTIONS });
    const [a, b] = rig.tenants;
    if (!a || !b) throw new Error('two tenants expected');
    // The newest season, edited before the first sync: the incremental cursor stands at its instant.
    const [newest] = rig.sim.controls.mutate({ tenant: a.slug, collection: 'seasons', edits: 1 }).edited;
    // A record dated far in the future, mirrored by the first sync.
    const [future] = rig.sim.controls.mutate({
      tenant: a.slug,
      collection: 'events',
      edits: 1,
      updatedAt: '2099-01-01T00:00:00.000Z',
    }).edited;
    await rig.firstSync();
    rig.expectMirrorEqualsUpstream();
    const worker = rig.worker('--http', '0');
    await worker.opsPort();
    const workerStart = Date.now();
    await rig.bothWatched();

    // The item 4: a season created dated 45 s back (more than 10 s before the newest), with a hard delete
    // of an older season; their +1 and -1 cancel in the count. Item 5: the future-dated event hard deleted.
    const te = Date.parse(rig.upstream(a.slug, 'seasons')[newest ?? ''] ?? '');
    const late = new Date(Math.min(Date.now() - 45_000, te - 10_000)).toISOString();
    const [created] = rig.sim.controls.mutate({
      tenant: a.slug,
      collection: 'seasons',
      creates: 1,
      updatedAt: late,
    }).created;
    const old = byAge(rig, a.slug, 'seasons')
      .slice(3)
      .find((id) => id !== newest && id !== created);
    await hardDelete(rig, a, 'seasons', old ?? '');
    await hardDelete(rig, a, 'events', future ?? '');
    const changedAt = Date.now();
    expect(Object.keys(rig.mirrored(a.slug, 'seasons')).length).toBe(
      Object.keys(rig.upstream(a.slug, 'seasons')).length,
    );

    await vi.waitFor(
      () => {
        expect(rig.mirrored(a.slug, 'seasons')).toEqual(rig.upstream(a.slug, 'seasons'));
        expect(rig.mirrored(a.slug, 'events')).toEqual(rig.upstream(a.slug, 'events'));
      },
      { timeout: ALL_MS, interval: 1000 },
    );
    const foundMs = Date.now() - changedAt;
    const [tomb] = rig.query<{ reason: string }>(
      "SELECT reason FROM changes WHERE tenant = ? AND collection = 'events' AND id = ? AND kind = 'delete'",
      a.slug,
      future,
    );
    expect(tomb?.reason).toBe('deleted');

    // Tenant B stays quiet throughout: its key's reads in any minute stay within idleShare (0.2 of 100 a minute),
    // the rotation of its event instances included.
    await sleep(Math.max(0, workerStart + 80_000 - Date.now()));
    const log = rig.sim.controls.requestLog();
    const quiet = peakReadsPerMinute(log, b.slug, workerStart + 15_000);
    expect(quiet).toBeLessThanOrEqual(20);
    const probes = log.filter(
      (e) => e.tenant === b.slug && e.method === 'GET' && Date.parse(e.at) >= workerStart + 15_000,
    );
    const span = (Date.now() - workerStart - 15_000) / 60_000;
    expect(rig.sim.controls.counters().total.rateLimited).toBe(0);
    rig.expectMirrorEqualsUpstream();
    const end = await worker.stop();
    expect(end.code, end.stderr.slice(-2000)).toBe(0);
    console.info(
      JSON.stringify({ foundMs, quietPeakReadsPerMinute: quiet, quietReadsPerMinute: probes.length / span }),
    );
  }, 240_000);
});
