import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { enqueueSync } from '../../src/app/enqueue-sync.js';
import { parseConfig } from '../../src/config/load-config.js';
import { createLogger } from '../../src/log.js';
import { createOpsMetrics } from '../../src/ops/metrics.js';
import { keyHash } from '../../src/partners/key-hash.js';
import { createRedisRateGate } from '../../src/queue/redis-rate-gate.js';
import type { CollectionSlug } from '../../src/vocabulary/collections.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { syncWorker, workerHarness } from './worker-harness.js';

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

describe('one slow key does not starve the others', () => {
  it("gives a sync's slot back while it waits for its key's budget, so another key's tenant syncs", async () => {
    const h = await workerHarness(server.url, { tenants: 2 });
    const slow = h.tenant;
    const fast = h.sim.tenants[1];
    if (!fast) throw new Error('two tenants expected');
    // Two reads per ten minutes: without parking, the slow tenant's jobs hold both slots for ten minutes.
    const config = parseConfig({
      ...h.config,
      worker: { ...h.config.worker, concurrency: 2, parkAfterMs: 100, parkForMs: 300 },
      tenants: [
        { slug: slow.slug, apiKeyEnv: 'W_KEY', rateLimit: { reads: 2, windowMs: 600_000 } },
        { slug: fast.slug, apiKeyEnv: 'W_KEY2' },
      ],
    });
    const metrics = createOpsMetrics({ processMetrics: false });
    const app = await syncWorker(config, {
      log: createLogger({ level: 'silent' }),
      env: { ...h.env, W_KEY2: fast.key },
      metrics,
    });
    const stop = new AbortController();
    const running = app.run(stop.signal);
    try {
      const add = (tenant: string, collection: CollectionSlug) =>
        enqueueSync({ redisUrl: server.url, prefix: h.prefix, tenant, collections: [collection], mode: 'full' });
      // The slow tenant's jobs are queued first, so they take both slots.
      const slowJobs = [await add(slow.slug, 'series'), await add(slow.slug, 'venues'), await add(slow.slug, 'events')];
      const fastJobs = [await add(fast.slug, 'series'), await add(fast.slug, 'venues')];
      await vi.waitFor(
        async () => {
          for (const id of fastJobs) expect(await h.state(id)).toBe('completed');
        },
        { timeout: 60_000, interval: 100 },
      );
      for (const id of slowJobs) {
        const job = await h.queue.getJob(id);
        // Parked, not failed: no attempt spent, still due to run once the budget frees.
        expect(['delayed', 'waiting', 'active']).toContain(await job?.getState());
        expect(job?.attemptsMade).toBe(0);
      }
      expect(await metrics.text()).toMatch(new RegExp(`understudy_sync_parked_total\\{tenant="${slow.slug}"\\} [1-9]`));
      const slowReads = h.sim.controls.requestLog().filter((e) => e.tenant === slow.slug).length;
      expect(slowReads).toBeLessThanOrEqual(2);
      expect(
        h.sim.controls.requestLog().filter((e) => e.tenant === fast.slug && e.status === 200).length,
      ).toBeGreaterThan(2);
    } finally {
      stop.abort();
      await running;
      await app.close();
    }
  });
  it("parks a tenant job whose route discovery waits for the key's budget", async () => {
    const h = await workerHarness(server.url, { tenants: 2 });
    const slow = h.tenant;
    const fast = h.sim.tenants[1];
    if (!fast) throw new Error('two tenants expected');
    const budget = { reads: 1, writes: 1, windowMs: 600_000 };
    const config = parseConfig({
      ...h.config,
      worker: { ...h.config.worker, concurrency: 1, parkAfterMs: 100, parkForMs: 300 },
      tenants: [
        { slug: slow.slug, apiKeyEnv: 'W_KEY', rateLimit: budget },
        { slug: fast.slug, apiKeyEnv: 'W_KEY2' },
      ],
    });
    // Another process has spent the slow key's budget already.
    const redis = new Redis(server.url, { maxRetriesPerRequest: null });
    onTestFinished(() => {
      redis.disconnect();
    });
    await createRedisRateGate({ redis, keyHash: keyHash(slow.key), budget, prefix: h.prefix }).acquire('read', {
      signal: new AbortController().signal,
    });
    const app = await syncWorker(config, {
      log: createLogger({ level: 'silent' }),
      env: { ...h.env, W_KEY2: fast.key },
    });
    const stop = new AbortController();
    const running = app.run(stop.signal);
    try {
      const fanOut = await enqueueSync({ redisUrl: server.url, prefix: h.prefix, tenant: slow.slug, mode: 'full' });
      const other = await enqueueSync({
        redisUrl: server.url,
        prefix: h.prefix,
        tenant: fast.slug,
        collections: ['series'],
        mode: 'full',
      });
      await vi.waitFor(async () => expect(await h.state(other)).toBe('completed'), { timeout: 60_000, interval: 100 });
      const job = await h.queue.getJob(fanOut);
      expect(['delayed', 'waiting', 'active']).toContain(await job?.getState());
      expect(job?.attemptsMade).toBe(0);
      expect(h.sim.controls.requestLog().filter((e) => e.tenant === slow.slug)).toEqual([]);
    } finally {
      stop.abort();
      await running;
      await app.close();
    }
  });
});
