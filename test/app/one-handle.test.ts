import { once } from 'node:events';
import { readdirSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { enqueueSync } from '../../src/queue/enqueue-sync.js';
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

const freePort = async (): Promise<number> => {
  const s = createServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const addr = s.address();
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return typeof addr === 'object' && addr ? addr.port : 0;
};

/** The open file descriptors of `pid` whose link ends in `suffix` (what `ls -l /proc/$PID/fd | grep -c` counts). */
const fdsOn = (pid: number, suffix: string): number =>
  readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`).endsWith(suffix);
    } catch {
      return false; // closed meanwhile
    }
  }).length;

describe.runIf(process.platform === 'linux')('one composition root (issue 13)', () => {
  it('a running worker holds one handle on the mirror file (plus -wal/-shm) and one HTTP pool', async () => {
    const h = await workerHarness(server.url);
    const port = await freePort();
    const worker = spawnCli(['worker', '--config', h.configPath, '--http', String(port)], { env: h.env });
    const out = collect(worker);
    const pid = worker.pid;
    if (pid === undefined) throw new Error('worker did not start');
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

    worker.kill('SIGTERM');
    const result = await out;
    expect(result.code, result.stderr).toBe(0);
    // The composition root counts the undici Agents it opens; the worker reports the count as it starts.
    const starting = result.stderr.split('\n').find((l) => l.includes('"msg":"worker starting"'));
    expect(starting, result.stderr).toBeDefined();
    expect(JSON.parse(starting ?? '{}').httpPools).toBe(1);
  });
});
