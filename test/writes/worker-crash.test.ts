import { writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { errorsFailTheCalls } from '../../src/queue/error-listeners.js';
import { openWritesQueue } from '../../src/queue/write-queue.js';
import { workerHarness } from '../app/worker-harness.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { runCli } from '../helpers/run-cli.js';
import { startWorker } from '../helpers/understudy-process.js';
import { startDroppingProxy } from './dropping-proxy.js';

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

/** Holds answers until the test lets them through. */
function requestGate() {
  const arrived: string[] = [];
  const held: (() => void)[] = [];
  return {
    arrived,
    hold: () => new Promise<void>((resolve) => held.push(resolve)),
    releaseAll: () => {
      for (const r of held.splice(0)) r();
    },
  };
}

describe('a write whose worker is killed twice', () => {
  it('keeps write_log in the job final state, creates the record once, and a retry finds it', async () => {
    const h = await workerHarness(server.url, {}, { lockDurationMs: 1000, stalledIntervalMs: 500 });
    const gate = requestGate();
    const slug = 'crash-twice';
    // Between the worker and the simulator, a proxy holds the answers of the create and of the lookup that follows
    // it: each is applied upstream, and its worker is killed before the answer arrives.
    const proxy = await startDroppingProxy(h.sim.url);
    onTestFinished(() => proxy.close());
    proxy.beforeAnswer(async (method, path) => {
      const series = path.split('?')[0]?.endsWith('/series');
      if (!series || (method !== 'POST' && method !== 'GET')) return;
      gate.arrived.push(method);
      if (gate.arrived.length <= 2) await gate.hold();
    });
    writeFileSync(h.configPath, JSON.stringify({ ...h.config, baseUrl: proxy.url }));
    const conn = new Redis(server.url, { maxRetriesPerRequest: null });
    const bull = openWritesQueue(conn, h.prefix, errorsFailTheCalls);
    onTestFinished(async () => {
      await bull.close();
      await conn.quit();
    });
    const env = h.env;
    const worker = () => startWorker(h.configPath, [], env);
    const kill = (w: ReturnType<typeof worker>) => w.stop('SIGKILL');

    const a = worker();
    const enq = await runCli(
      [
        'enqueue',
        '--config',
        h.configPath,
        '--tenant',
        h.tenant.slug,
        '--op',
        'create',
        '--collection',
        'series',
        '--body',
        JSON.stringify({ title: 'Crash twice', slug, _status: 'published' }),
      ],
      { env },
    );
    expect(enq.code, enq.stderr).toBe(0);
    const jobId = enq.stdout.trim().split('\n').pop() as string;
    const logRow = () => {
      const d = new Database(h.db, { readonly: true, fileMustExist: true });
      try {
        return d.prepare('SELECT status, error, attempts FROM write_log WHERE job_id = ?').get(jobId) as
          | { status: string; error: string | null; attempts: number }
          | undefined;
      } finally {
        d.close();
      }
    };
    const upstreamCount = () => h.sim.controls.docs(h.tenant.slug, 'series').filter((d) => d.slug === slug).length;

    // Crash 1: mid-create. The upstream applies it after the worker is gone.
    await vi.waitFor(() => expect(gate.arrived).toEqual(['POST']), { timeout: 30_000, interval: 20 });
    expect(logRow()?.status).toBe('running');
    expect(upstreamCount()).toBe(1);
    await kill(a);
    gate.releaseAll();

    // Crash 2: the next worker takes the stalled write up again and looks before resending; killed mid-lookup.
    const b = worker();
    await vi.waitFor(() => expect(gate.arrived).toEqual(['POST', 'GET']), { timeout: 30_000, interval: 20 });
    await kill(b);
    gate.releaseAll();

    // A third worker finds the write stalled a second time: BullMQ fails it, and write_log says so.
    const c = worker();
    await vi.waitFor(
      async () => {
        expect(await bull.getJobState(jobId)).toBe('failed');
        expect(logRow()).toMatchObject({ status: 'failed', error: expect.stringMatching(/stalled/) });
      },
      { timeout: 30_000, interval: 50 },
    );
    expect(upstreamCount()).toBe(1);

    // `writes retry` looks the record up (the worker died mid-request) and finds it: nothing is sent again.
    const retry = await runCli(['writes', 'retry', jobId, '--config', h.configPath], { env });
    expect(retry.code, retry.stderr).toBe(0);
    await vi.waitFor(async () => expect(await bull.getJobState(jobId)).toBe('completed'), {
      timeout: 30_000,
      interval: 50,
    });
    await vi.waitFor(() => expect(logRow()?.status).toBe('ok'), { timeout: 10_000, interval: 20 });
    expect(upstreamCount()).toBe(1);
    expect(h.sim.controls.requestLog().filter((e) => e.method === 'POST' && e.path.includes('/series'))).toHaveLength(
      1,
    );
    expect((await bull.getJob(jobId))?.returnvalue).toMatchObject({
      status: 'ok',
      note: 'found after unknown outcome',
    });
    await c.stop();
  });
});
