import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { enqueueSync } from '../../src/app/enqueue-sync.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { collect, spawnCli } from '../helpers/run-cli.js';
import { workerHarness } from './worker-harness.js';

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

// event-instances: 36 records in pages of 5, each page slowed down so a worker can be stopped mid-sync.
const SLOW = { kind: 'latency', ms: 150, count: 10_000, match: { path: '/event-instances' } } as const;

describe('understudy worker (child processes)', () => {
  it('recovers the job of a worker killed with -9; another worker resumes from the last committed page', async () => {
    const h = await workerHarness(server.url);
    h.sim.controls.injectFaults({ ...SLOW });
    const total = h.sim.controls.docs(h.tenant.slug, 'event-instances').length;
    const a = spawnCli(['worker', '--config', h.configPath], { env: h.env });
    const aOut = collect(a);
    const jobId = await enqueueSync({
      redisUrl: server.url,
      prefix: h.prefix,
      tenant: h.tenant.slug,
      collections: ['event-instances'],
      mode: 'full',
    });
    await vi.waitFor(() => expect(h.rows('event_instances')).toBeGreaterThanOrEqual(10), {
      timeout: 30_000,
      interval: 50,
    });
    a.kill('SIGKILL');
    await aOut;
    const b = spawnCli(['worker', '--config', h.configPath], { env: h.env });
    const bOut = collect(b);
    await vi.waitFor(async () => expect(await h.state(jobId)).toBe('completed'), { timeout: 45_000, interval: 100 });
    const job = await h.queue.getJob(jobId);
    expect((job?.returnvalue as { fetched: number } | undefined)?.fetched).toBeLessThan(total);
    expect(h.rows('event_instances')).toBe(total);
    b.kill('SIGTERM');
    const bResult = await bOut;
    expect(bResult.code, bResult.stderr).toBe(0);
    expect(bResult.stderr).toMatch(/stalled|collection sync finished/);
    expect(bResult.stderr).not.toContain(h.tenant.key);
  });

  it('on SIGTERM commits the page in flight, hands the job back and exits 0', async () => {
    const h = await workerHarness(server.url);
    h.sim.controls.injectFaults({ ...SLOW });
    const total = h.sim.controls.docs(h.tenant.slug, 'event-instances').length;
    const a = spawnCli(['worker', '--config', h.configPath], { env: h.env });
    const aOut = collect(a);
    const jobId = await enqueueSync({
      redisUrl: server.url,
      prefix: h.prefix,
      tenant: h.tenant.slug,
      collections: ['event-instances'],
      mode: 'full',
    });
    await vi.waitFor(() => expect(h.rows('event_instances')).toBeGreaterThanOrEqual(5), {
      timeout: 30_000,
      interval: 50,
    });
    a.kill('SIGTERM');
    const r = await aOut;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/job handed back/);
    // Whole pages only: the page in flight was committed with its checkpoint.
    const kept = h.rows('event_instances');
    expect(kept % 5 === 0 || kept === total).toBe(true);
    expect(['waiting', 'delayed', 'completed']).toContain(await h.state(jobId));
    const b = spawnCli(['worker', '--config', h.configPath], { env: h.env });
    const bOut = collect(b);
    await vi.waitFor(async () => expect(await h.state(jobId)).toBe('completed'), { timeout: 30_000, interval: 100 });
    expect(h.rows('event_instances')).toBe(total);
    expect((await h.queue.getJob(jobId))?.attemptsMade).toBeLessThanOrEqual(1);
    b.kill('SIGTERM');
    const [code] = (await once(b, 'exit')) as [number | null];
    expect(code).toBe(0);
    await bOut;
  });
});
