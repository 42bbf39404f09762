import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CollectionSlug } from '../../src/vocabulary/collections.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { parsePrometheus } from '../ops/parse-prometheus.js';
import { metricsOf, watchRig } from './watch-harness.js';

// One engine per test file (watch-resume-sqlite, watch-resume-postgres): each waits out a lease for most of its
// minute, so the two run side by side.

const COLLECTIONS: readonly CollectionSlug[] = ['events', 'series', 'venues', 'seasons'];
/** A tenant's watch lease (20 s) and how often the other workers ask for it (a quarter of it), with a margin. */
const TAKEOVER_MS = 20_000 + 5_000 + 5_000;
/** How long the resumed worker is watched after SIGCONT. */
const AFTER_MS = 10_000;

/** The requests a worker's /metrics counts as sent to the upstream for each tenant. */
const requestsBy = async (port: number): Promise<Map<string, number>> => {
  const out = new Map<string, number>();
  for (const s of parsePrometheus(await metricsOf(port)).samples)
    if (s.name === 'understudy_upstream_requests_total')
      out.set(s.labels.tenant ?? '', (out.get(s.labels.tenant ?? '') ?? 0) + s.value);
  return out;
};

/** The pid a holder names (host:pid:run). */
const pidOf = (holder: string | undefined): number => Number(holder?.split(':')[1]);

/** The paused-worker test on one engine: `database` gives a PostgreSQL URL, or undefined for a SQLite file. */
export function watchResumeContract(engine: string, database: () => Promise<string | undefined>): void {
  let server: TestRedis;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await server?.stop();
  });

  describe(`watch on a ${engine} mirror: a worker paused past its lease`, () => {
    it('sends no request for the tenants another worker took over once it resumes', async () => {
      const url = await database();
      const rig = await watchRig(server.url, {
        records: 40,
        collections: COLLECTIONS,
        ...(url ? { database: url } : {}),
      });
      await rig.firstSync();
      const first = rig.worker('--http', '0');
      const firstPort = (await first.opsPort()).port;
      await rig.bothWatched();
      const second = rig.worker('--http', '0');
      await second.opsPort();
      // The first worker claimed both tenants before the second started.
      const [owner, other] = [first, second];
      const lost = [...(await rig.owners()).entries()].filter(([, h]) => pidOf(h) === owner.pid).map(([t]) => t);
      expect(lost).toHaveLength(2);
      // Probing for a while: every collection of its tenants has had a turn.
      await sleep(15_000);

      const before = await requestsBy(firstPort);
      owner.child.kill('SIGSTOP');
      const stoppedAt = Date.now();
      try {
        await vi.waitFor(
          async () => {
            const now = await rig.owners();
            for (const t of lost) expect(pidOf(now.get(t)), t).toBe(other.pid);
          },
          { timeout: TAKEOVER_MS, interval: 500 },
        );
      } finally {
        owner.child.kill('SIGCONT');
      }
      const pausedMs = Date.now() - stoppedAt;
      await sleep(AFTER_MS);
      const after = await requestsBy(firstPort);
      const sent = Object.fromEntries(lost.map((t) => [t, (after.get(t) ?? 0) - (before.get(t) ?? 0)]));
      console.info(JSON.stringify({ pausedMs, sentAfterResume: sent }));
      for (const t of lost) expect(sent[t], `requests for ${t} after SIGCONT`).toBe(0);
      // The new owner keeps them.
      const now = await rig.owners();
      for (const t of lost) expect(pidOf(now.get(t))).toBe(other.pid);
      for (const w of [owner, other]) {
        const end = await w.stop();
        expect(end.code, end.stderr.slice(-2000)).toBe(0);
      }
    }, 120_000);
  });
}
