import { once } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { enqueueSync } from '../../src/app/enqueue-sync.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { fdsOn, poolCensusEnv, readPoolCensus } from '../helpers/resource-census.js';
import { startWorker } from '../helpers/understudy-process.js';
import { tempDir, workerHarness } from './worker-harness.js';

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

const freePort = async (): Promise<number> => {
  const s = createServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const addr = s.address();
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return typeof addr === 'object' && addr ? addr.port : 0;
};

// The detectors (file descriptors from /proc, the HTTP pool census) are shown to notice a second handle or pool in
// resource-census.test.ts.
describe.runIf(process.platform === 'linux')('one composition root (issues 13, 16)', () => {
  it('a running worker holds one handle on the mirror file (plus -wal/-shm) and one HTTP pool', async () => {
    const h = await workerHarness(server.url);
    const port = await freePort();
    const census = join(tempDir(), 'census.json');
    const worker = startWorker(h.configPath, ['--http', String(port)], { ...h.env, ...poolCensusEnv(census) });
    const { pid } = worker;
    const jobId = await enqueueSync({
      redisUrl: server.url,
      prefix: h.prefix,
      tenant: h.tenant.slug,
      collections: ['event-instances'],
      mode: 'full',
    });
    await vi.waitFor(async () => expect(await h.state(jobId)).toBe('completed'), { timeout: 30_000, interval: 100 });
    expect(h.rows('event_instances')).toBe(h.sim.controls.docs(h.tenant.slug, 'event-instances').length);
    // Readiness and the freshness metrics read the mirror too: over the same connection.
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);

    expect(fdsOn(pid, '/mirror.db')).toBe(1);
    expect(fdsOn(pid, '/mirror.db-wal')).toBeLessThanOrEqual(1);
    expect(fdsOn(pid, '/mirror.db-shm')).toBeLessThanOrEqual(1);

    const result = await worker.stop();
    expect(result.code, result.stderr).toBe(0);
    // The composition root counts the undici Agents it opens; the worker reports the count as it starts.
    const starting = result.stderr.split('\n').find((l) => l.includes('"msg":"worker starting"'));
    expect(starting, result.stderr).toBeDefined();
    expect(JSON.parse(starting ?? '{}').httpPools).toBe(1);
    // Every request the process made went through one pool: the app's.
    const pools = readPoolCensus(census);
    expect(pools.pools, JSON.stringify(pools)).toBe(1);
    expect(pools.requests, JSON.stringify(pools)).toBe(pools.pooled);
  });
});
