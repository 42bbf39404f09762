import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { enqueueSync } from '../../src/app/enqueue-sync.js';
import { parseConfig } from '../../src/config/load-config.js';
import { createLogger } from '../../src/log.js';
import { reconcileSchedules, schedulesFor } from '../../src/queue/schedules.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { runCli } from '../helpers/run-cli.js';
import { syncWorker, workerHarness } from './worker-harness.js';

// These tests stop, restart or flush Redis, so they run on a server of their own (never skipped).
let server: TestRedis;
beforeAll(async () => {
  server = await startRedis({ own: true });
});
afterAll(async () => {
  await server?.stop();
});

describe('Redis going away (own redis-server)', () => {
  it('carries on through a Redis restart mid-run: the job completes, no crash', async () => {
    const h = await workerHarness(server.url, {}, { lockDurationMs: 5000 });
    h.sim.controls.injectFaults({ kind: 'latency', ms: 100, count: 10_000, match: { path: '/event-instances' } });
    const total = h.sim.controls.docs(h.tenant.slug, 'event-instances').length;
    const app = await syncWorker(parseConfig(h.config), { log: createLogger({ level: 'silent' }), env: h.env });
    const stop = new AbortController();
    const running = app.run(stop.signal);
    try {
      const jobId = await enqueueSync({
        redisUrl: server.url,
        prefix: h.prefix,
        tenant: h.tenant.slug,
        collections: ['event-instances'],
        mode: 'full',
      });
      await vi.waitFor(() => expect(h.rows('event_instances')).toBeGreaterThanOrEqual(5), {
        timeout: 30_000,
        interval: 20,
      });
      await server.restart();
      await vi.waitFor(async () => expect(await h.state(jobId)).toBe('completed'), { timeout: 45_000, interval: 100 });
      expect(h.rows('event_instances')).toBe(total);
    } finally {
      stop.abort();
      await running;
      await app.close();
    }
  });

  it('status reports mirror, schedules and queues with Redis up, and the mirror alone with Redis down', async () => {
    const h = await workerHarness(server.url);
    const config = parseConfig({
      ...h.config,
      tenants: [{ ...h.config.tenants[0], schedule: { incrementalEveryMinutes: 30, fullCron: '0 3 * * *' } }],
    });
    const { writeFileSync } = await import('node:fs');
    writeFileSync(h.configPath, JSON.stringify({ ...h.config, tenants: config.tenants }));
    const synced = await runCli(['sync', '--config', h.configPath, '--collection', 'series', '--json'], { env: h.env });
    expect(synced.code, synced.stderr).toBe(0);
    await reconcileSchedules(h.queue, schedulesFor(config.tenants), createLogger({ level: 'silent' }));
    await enqueueSync({ redisUrl: server.url, prefix: h.prefix, tenant: h.tenant.slug, mode: 'incremental' });

    const up = await runCli(['status', '--config', h.configPath, '--json'], { env: h.env });
    expect(up.code, up.stderr).toBe(0);
    const report = JSON.parse(up.stdout);
    expect(report.redis).toMatchObject({ ok: true, prefix: h.prefix });
    // The enqueued job, and the incremental scheduler's first tick (an `every` scheduler fires at once).
    expect(report.queues[0]).toMatchObject({ name: 'sync', waiting: 2, active: 0, failed: 0 });
    expect(report.queues[1]).toMatchObject({ name: 'writes', waiting: 0, failed: 0 });
    const tenant = report.tenants.find((t: { slug: string }) => t.slug === h.tenant.slug);
    expect(tenant.nextRun.incremental).toMatch(/^\d{4}-/);
    expect(tenant.nextRun.full).toMatch(/T03:00:00/);
    const series = tenant.collections.find((c: { name: string }) => c.name === 'series');
    expect(series).toMatchObject({
      live: h.sim.controls.docs(h.tenant.slug, 'series').length,
      deleted: 0,
      lastError: null,
    });
    expect(series.lastSuccessAgeSeconds).toBeGreaterThanOrEqual(0);
    const text = await runCli(['status', '--config', h.configPath], { env: h.env });
    expect(text.stdout).toMatch(/series/);
    expect(text.stdout).toMatch(/waiting/);

    await server.kill();
    const down = await runCli(['status', '--config', h.configPath, '--json'], { env: h.env });
    expect(down.code, down.stderr).toBe(0);
    const offline = JSON.parse(down.stdout);
    expect(offline.redis.ok).toBe(false);
    expect(offline.redis.error).toMatch(/unreachable/i);
    expect(offline.queues).toEqual([]);
    expect(offline.tenants[0].collections.find((c: { name: string }) => c.name === 'series').live).toBe(series.live);
    const downText = await runCli(['status', '--config', h.configPath], { env: h.env });
    expect(downText.stdout).toMatch(/Redis unreachable/);
    await server.restart();
  });
});
