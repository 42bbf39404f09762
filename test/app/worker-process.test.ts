import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
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
    const a = h.worker();
    const jobId = await h.syncUnderway(10);
    await a.stop('SIGKILL');
    const b = h.worker();
    await vi.waitFor(async () => expect(await h.state(jobId)).toBe('completed'), { timeout: 45_000, interval: 100 });
    const job = await h.queue.getJob(jobId);
    expect((job?.returnvalue as { fetched: number } | undefined)?.fetched).toBeLessThan(total);
    expect(h.rows('event_instances')).toBe(total);
    const bResult = await b.stop();
    expect(bResult.code, bResult.stderr).toBe(0);
    expect(bResult.stderr).toMatch(/stalled|collection sync finished/);
    expect(bResult.stderr).not.toContain(h.tenant.key);
  });

  it('on SIGTERM commits the page in flight, hands the job back and exits 0', async () => {
    const h = await workerHarness(server.url);
    h.sim.controls.injectFaults({ ...SLOW });
    const total = h.sim.controls.docs(h.tenant.slug, 'event-instances').length;
    const a = h.worker();
    const jobId = await h.syncUnderway(5);
    const r = await a.stop();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/job handed back/);
    // Whole pages only: the page in flight was committed with its checkpoint.
    const kept = h.rows('event_instances');
    expect(kept % 5 === 0 || kept === total).toBe(true);
    expect(['waiting', 'delayed', 'completed']).toContain(await h.state(jobId));
    const b = h.worker();
    await vi.waitFor(async () => expect(await h.state(jobId)).toBe('completed'), { timeout: 30_000, interval: 100 });
    expect(h.rows('event_instances')).toBe(total);
    expect((await h.queue.getJob(jobId))?.attemptsMade).toBeLessThanOrEqual(1);
    expect((await b.stop()).code).toBe(0);
  });
});
