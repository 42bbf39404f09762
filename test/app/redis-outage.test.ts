import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { enqueueSync } from '../../src/app/enqueue-sync.js';
import { parseConfig } from '../../src/config/load-config.js';
import { createLogger } from '../../src/log.js';
import { reconcileSchedules, schedulesFor } from '../../src/queue/schedules.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { runCli } from '../helpers/run-cli.js';
import { startWorker } from '../helpers/understudy-process.js';
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
      const jobId = await h.syncUnderway(5);
      await server.restart();
      await vi.waitFor(async () => expect(await h.state(jobId)).toBe('completed'), { timeout: 45_000, interval: 100 });
      expect(h.rows('event_instances')).toBe(total);
    } finally {
      stop.abort();
      await running;
      await app.close();
    }
  });

  it('stops on one SIGTERM within its grace, exit 0, when Redis died under it with every part running', {
    timeout: 120_000,
  }, async () => {
    const h = await workerHarness(server.url);
    // Every part: syncs (the schedules of the outside check), watch, writes, webhooks, scheduled self-checks.
    const tenant = {
      ...h.config.tenants[0],
      schedule: { incrementalEveryMinutes: 0, fullCron: '0 3 * * *', checkCron: '* * * * *', timezone: 'UTC' },
      webhooks: [{ url: 'http://127.0.0.1:9/hook', secretEnv: 'HOOK_SECRET' }],
    };
    writeFileSync(h.configPath, JSON.stringify({ ...h.config, watch: true, tenants: [tenant] }));
    const env = { ...h.env, HOOK_SECRET: `whsec_${randomBytes(24).toString('base64')}` };
    // A sync in flight when Redis goes: event-instances, 36 records in pages of 5, each page slowed down.
    h.sim.controls.injectFaults({ kind: 'latency', ms: 150, count: 10_000, match: { path: '/event-instances' } });
    const total = h.sim.controls.docs(h.tenant.slug, 'event-instances').length;
    const w = startWorker(h.configPath, [], env);
    await w.waitForLog(/"watch started"/);
    await w.waitForLog(/"schedules reconciled"/);
    await h.syncUnderway(5);
    await server.kill();
    await w.waitForLog(/Redis unreachable/);
    const t0 = performance.now();
    w.child.kill('SIGTERM');
    // Bounded, so a worker that does not stop fails here with its log rather than at the test's timeout.
    const r = await Promise.race([w.exited, delay(20_000, null, { ref: false })]);
    const ms = performance.now() - t0;
    await server.restart();
    if (r === null) {
      const log = w.log();
      w.child.kill('SIGKILL');
      expect.fail(`still running 20 s after one SIGTERM:\n${log.slice(-3000)}`);
    }
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    // The first SIGTERM is enough, and nothing waits for Redis: well within the sync's grace (7 s), and before the
    // CLI's own 3 s fallback exit (which would mean something still held the process).
    expect(ms, r.stderr.slice(-3000)).toBeLessThan(3000);
    const atStop = r.stderr.split('\n').filter((l) => /Redis unreachable at stop/.test(l));
    expect(atStop, r.stderr.slice(-3000)).toHaveLength(1);
    // The page in flight was committed whole; the job is taken up again once its lock expires.
    const kept = h.rows('event_instances');
    expect(kept % 5 === 0 || kept === total, `${kept} of ${total}`).toBe(true);
    // A stop is no failure: the sync in flight stopped (it did not fail), and nothing was logged as an error.
    expect(r.stderr).toMatch(/"sync stopped"|job handed back/);
    expect(r.stderr).not.toMatch(/"level":50/);
    // JSON lines only: no raw stack of an unheard 'error'.
    for (const line of r.stderr.split('\n').filter((l) => l.trim() !== ''))
      expect(() => JSON.parse(line), line).not.toThrow();
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
