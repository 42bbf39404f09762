import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { createApp } from '../../src/app/create-app.js';
import { enqueueSync } from '../../src/app/enqueue-sync.js';
import { collectStatus, formatStatus } from '../../src/cli/status-command.js';
import { parseConfig } from '../../src/config/load-config.js';
import { createLogger } from '../../src/log.js';
import { createOpsMetrics } from '../../src/ops/metrics.js';
import { keyHash } from '../../src/partners/key-hash.js';
import { sentinelKey } from '../../src/queue/redis-loss.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { syncWorker, workerHarness } from './worker-harness.js';

// FLUSHALL empties the whole server: these tests need one of their own.
let server: TestRedis;
beforeAll(async () => {
  server = await startRedis({ own: true });
});
afterAll(async () => {
  await server?.stop();
});

describe('Redis emptied under a running worker (own redis-server)', () => {
  it('recreates its schedules, holds the rate budget for a window and says what was lost', async () => {
    const h = await workerHarness(server.url);
    const reads = 6;
    const config = parseConfig({
      ...h.config,
      tenants: [
        {
          slug: h.tenant.slug,
          apiKeyEnv: 'W_KEY',
          // A window far longer than the test: whatever is admitted after the flush counts against the same window.
          rateLimit: { reads, windowMs: 600_000 },
          schedule: { incrementalEveryMinutes: 30, fullCron: '0 3 * * *', timezone: 'Europe/London' },
        },
      ],
    });
    const lines: string[] = [];
    const log = createLogger({
      level: 'info',
      destination: new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
    });
    const metrics = createOpsMetrics({ processMetrics: false });
    const app = await syncWorker(config, { log, env: h.env, redisCheckMs: 100, metrics });
    const stop = new AbortController();
    const running = app.run(stop.signal);
    onTestFinished(async () => {
      stop.abort();
      await running;
      await app.close();
    });
    const admin = new Redis(server.url);
    onTestFinished(() => {
      admin.disconnect();
    });
    const gateKey = `${h.prefix}:rate:${keyHash(h.tenant.key)}`;
    const admitted = () => h.sim.controls.requestLog().length;
    await enqueueSync({ redisUrl: server.url, prefix: h.prefix, tenant: h.tenant.slug, mode: 'full' });
    // The whole budget is spent (the gate's window holds it), and jobs wait for more.
    await vi.waitFor(async () => expect(await admin.zcard(`${gateKey}:read`)).toBe(reads), {
      timeout: 30_000,
      interval: 50,
    });
    await vi.waitFor(async () => expect((await h.queue.getJobCounts('waiting')).waiting).toBeGreaterThan(0), {
      timeout: 30_000,
      interval: 50,
    });

    // Every admitted request has been answered (a member still in flight is scored a lease ahead of now), so the
    // upstream has counted it before the flush; a busy machine may otherwise deliver one after `before`.
    await vi.waitFor(
      async () => {
        const [, top] = await admin.zrange(`${gateKey}:read`, -1, -1, 'WITHSCORES');
        const [secs = '0', micros = '0'] = await admin.time();
        expect(Number(top)).toBeLessThanOrEqual(Number(secs) * 1000 + Number(micros) / 1000);
      },
      { timeout: 30_000, interval: 50 },
    );
    const before = admitted();
    expect(before).toBeGreaterThan(0);
    await admin.flushall();

    // The worker notices: schedules come back (status shows the next runs) and the loss is reported.
    const status = async () => {
      await using reader = await createApp(config, h.env, { profile: 'reader', database: h.db });
      return await collectStatus(reader);
    };
    await vi.waitFor(
      async () => {
        const r = await status();
        expect(r.tenants[0]?.nextRun.full).toMatch(/T0[23]:00:00/);
        expect(r.tenants[0]?.nextRun.incremental).toMatch(/^\d{4}-/);
        expect(r.redis.ok && r.redis.lost).toBeTruthy();
      },
      { timeout: 30_000, interval: 100 },
    );
    const report = await status();
    if (!report.redis.ok || !report.redis.lost) throw new Error('no loss report');
    expect([...report.redis.lost.schedulesRecreated].sort()).toEqual([
      `full.${h.tenant.slug}`,
      `incremental.${h.tenant.slug}`,
    ]);
    const sync = report.redis.lost.queues.find((q) => q.name === 'sync');
    expect((sync?.waiting ?? 0) + (sync?.active ?? 0)).toBeGreaterThan(0);
    expect(formatStatus(report)).toMatch(/Redis lost its data/);
    expect(lines.join('')).toMatch(/Redis lost its data/);
    expect(await metrics.text()).toMatch(/understudy_redis_data_lost_total 1/);

    // The key is held for a whole window (for every process: the pause is the key's, in Redis), so nothing beyond
    // the budget reaches the upstream although the gate's window set is empty.
    await vi.waitFor(async () => expect(await admin.pttl(`${gateKey}:pause`)).toBeGreaterThan(500_000), {
      timeout: 30_000,
      interval: 50,
    });
    expect(admitted()).toBe(before);
    expect(await admin.zcard(`${gateKey}:read`)).toBe(0);
  });

  it('notices a restart without persistence on reconnect and recreates its schedules', async () => {
    const h = await workerHarness(server.url);
    const config = parseConfig({
      ...h.config,
      tenants: [
        {
          slug: h.tenant.slug,
          apiKeyEnv: 'W_KEY',
          schedule: { incrementalEveryMinutes: 0, fullCron: '0 4 * * *' },
        },
      ],
    });
    // Checked only on reconnect here: the periodic look is far off.
    const app = await syncWorker(config, {
      log: createLogger({ level: 'silent' }),
      env: h.env,
      redisCheckMs: 3_600_000,
    });
    const stop = new AbortController();
    const running = app.run(stop.signal);
    onTestFinished(async () => {
      stop.abort();
      await running;
      await app.close();
    });
    const status = async () => {
      await using reader = await createApp(config, h.env, { profile: 'reader', database: h.db });
      return await collectStatus(reader);
    };
    await vi.waitFor(async () => expect((await status()).tenants[0]?.nextRun.full).toMatch(/T04:00:00/), {
      timeout: 30_000,
      interval: 100,
    });
    // The watch has taken its first look (its sentinel is set) before Redis goes: a loss needs a known before.
    const admin = new Redis(server.url);
    await vi.waitFor(async () => expect(await admin.exists(sentinelKey(h.prefix))).toBe(1), {
      timeout: 30_000,
      interval: 50,
    });
    admin.disconnect();
    await server.kill();
    await server.restart(); // nothing was saved: it comes back empty
    await vi.waitFor(
      async () => {
        const r = await status();
        expect(r.tenants[0]?.nextRun.full).toMatch(/T04:00:00/);
        expect(r.redis.ok && r.redis.lost?.schedulesRecreated).toEqual([`full.${h.tenant.slug}`]);
      },
      { timeout: 30_000, interval: 100 },
    );
  });
});
