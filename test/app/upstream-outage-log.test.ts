import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { enqueueSync } from '../../src/app/enqueue-sync.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { startStoppableProxy } from '../helpers/stoppable-proxy.js';
import { startWorker } from '../helpers/understudy-process.js';
import { workerHarness } from './worker-harness.js';

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

/** The JSON lines of a log whose `msg` is `msg`. */
const linesOf = (log: string, msg: string): Record<string, unknown>[] =>
  log
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((o) => o.msg === msg);

describe('an upstream that goes away under a worker for a while', () => {
  it('is said once with its cause while its requests are retried, and once when they work again, with the count', {
    timeout: 120_000,
  }, async () => {
    const h = await workerHarness(server.url);
    const sim = new URL(h.sim.url);
    const proxy = await startStoppableProxy({ host: sim.hostname, port: Number(sim.port) });
    onTestFinished(() => proxy.close());
    // The worker reaches the upstream through the proxy; a job outlasts the outage (10 attempts).
    writeFileSync(
      h.configPath,
      JSON.stringify({ ...h.config, baseUrl: proxy.url, worker: { ...h.config.worker, attempts: 10 } }),
    );
    const w = startWorker(h.configPath, [], h.env);
    await w.waitForLog(/"worker starting"/);
    await proxy.down();
    const jobId = await enqueueSync({
      redisUrl: server.url,
      prefix: h.prefix,
      tenant: h.tenant.slug,
      collections: ['series'],
      mode: 'full',
    });
    // Two attempts of the job have failed (five requests each, four of them retried) before the upstream is back.
    await vi.waitFor(async () => expect((await h.queue.getJob(jobId))?.attemptsMade).toBeGreaterThanOrEqual(2), {
      timeout: 60_000,
      interval: 100,
    });
    await proxy.up();
    await vi.waitFor(async () => expect(await h.state(jobId)).toBe('completed'), { timeout: 60_000, interval: 100 });
    const r = await w.stop();
    expect(r.code, r.stderr.slice(-3000)).toBe(0);

    const retrying = linesOf(r.stderr, 'retrying upstream request');
    expect(retrying, r.stderr.slice(-3000)).toHaveLength(1);
    expect(retrying[0]).toMatchObject({
      level: 40,
      tenant: h.tenant.slug,
      status: 0,
      reason: `ECONNREFUSED at 127.0.0.1:${proxy.port}: connection refused (nothing listens there)`,
    });
    expect(linesOf(r.stderr, 'upstream request failed')).toEqual([]);
    const back = linesOf(r.stderr, 'upstream requests work again');
    expect(back).toHaveLength(1);
    expect(back[0]).toMatchObject({ level: 30, reason: retrying[0]?.reason });
    expect(back[0]?.failures).toBeGreaterThanOrEqual(10);
    expect(back[0]?.ms).toBeGreaterThan(0);
  });
});
