import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { collectionLockKey } from '../../src/queue/collection-lock.js';
import { createWriteQueue } from '../../src/queue/write-queue.js';
import { startSimulator } from '../../src/sim/start-simulator.js';
import { testDatabase } from '../helpers/postgres.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { startWorker } from '../helpers/understudy-process.js';
import { tempDir } from './worker-harness.js';

// Issue 37, item 4: every line a worker writes through a Redis outage is one JSON object. With BullMQ 5.81 an
// unheard queue drops its connection's errors rather than printing them, so this outage alone passes without the
// listeners too; test/app/error-listeners.test.ts is the one that names a queue, worker or connection left unheard.
// This test stops and restarts Redis, so it runs on a server of its own (never skipped).
let server: TestRedis;
beforeAll(async () => {
  server = await startRedis({ own: true });
});
afterAll(async () => {
  await server?.stop();
});

/** A webhook endpoint that takes every delivery. */
async function hookEndpoint(): Promise<string> {
  const http = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  onTestFinished(() => new Promise<void>((resolve) => http.close(() => resolve())));
  const addr = http.address();
  return `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/hook`;
}

/** The lines of `text` that are not one JSON object each. */
const notJson = (text: string): string[] =>
  text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .filter((l) => {
      try {
        const v: unknown = JSON.parse(l);
        return typeof v !== 'object' || v === null || Array.isArray(v);
      } catch {
        return true;
      }
    });

/** How many lines of `text` match `re`. */
const count = (text: string, re: RegExp): number => text.split('\n').filter((l) => re.test(l)).length;

describe('a worker whose Redis goes away for a while (own redis-server)', () => {
  it('writes only JSON lines through the outage and after, with every part running on a PostgreSQL mirror', {
    timeout: 120_000,
  }, async () => {
    const sim = await startSimulator({ port: 0, readLimit: 0, writeLimit: 0, records: 12, maxLimit: 5, tenants: 2 });
    onTestFinished(() => sim.close());
    const tenants = sim.tenants.slice(0, 2);
    const prefix = `t-${randomUUID()}`;
    const hook = await hookEndpoint();
    const schedule = { incrementalEveryMinutes: 0, fullCron: '0 3 * * *', checkCron: '* * * * *', timezone: 'UTC' };
    const configPath = join(tempDir(), 'config.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        baseUrl: sim.url,
        database: await testDatabase(),
        redis: { prefix },
        watch: true,
        worker: { lockDurationMs: 2000, stalledIntervalMs: 1000, backoffMs: 100, concurrency: 2 },
        tenants: tenants.map((t, i) => ({
          slug: t.slug,
          apiKeyEnv: `K${i}`,
          schedule,
          webhooks: [{ url: hook, secretEnv: 'HOOK_SECRET' }],
        })),
      }),
    );
    const env = {
      K0: tenants[0]?.key,
      K1: tenants[1]?.key,
      REDIS_URL: server.url,
      LOG_LEVEL: 'info',
      HOOK_SECRET: `whsec_${randomBytes(24).toString('base64')}`,
    };
    const w = startWorker(configPath, ['--http', '0'], env);
    const { port } = await w.opsPort();
    await w.waitForLog(/"watch started"/);
    await w.waitForLog(/"write worker started"/);

    // Writes from an app: an update, and a bulk write whose sync is queued (another run holds the collection), so
    // the worker also opens the sync queue it queues such syncs on.
    const t0 = tenants[0];
    if (!t0) throw new Error('no tenant');
    const [org] = sim.controls.docs(t0.slug, 'organizations');
    if (!org) throw new Error('no organization');
    const lock = new Redis(server.url);
    lock.on('error', () => {});
    await lock.set(collectionLockKey(prefix, t0.slug, 'organizations'), 'another-run', 'PX', 60_000);
    lock.disconnect();
    const writes = await createWriteQueue({ redisUrl: server.url, prefix, onWarning: () => {} });
    await writes.update(t0.slug, 'organizations', String(org.id), { name: 'Renamed' });
    await writes.bulk(t0.slug, 'organizations', { ids: [String(org.id)], set: { region: 'north' } });
    await writes.close();
    await w.waitForLog(/"bulk write: incremental sync queued"/);

    // Redis goes away for a dozen reconnection attempts (about 15 s) while /readyz is asked, then comes back with its
    // data, and the worker takes writes again.
    await server.down();
    await vi.waitFor(
      async () => {
        await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.arrayBuffer());
        expect(count(w.log(), /Redis unreachable/)).toBeGreaterThanOrEqual(12);
      },
      { timeout: 60_000, interval: 250 },
    );
    await server.restart();
    await w.waitForLog(/"redis connection back"/);
    const again = await createWriteQueue({ redisUrl: server.url, prefix, onWarning: () => {} });
    await again.update(t0.slug, 'organizations', String(org.id), { name: 'Renamed again' });
    await again.close();
    await vi.waitFor(() => expect(count(w.log(), /"write applied"/), w.log().slice(-3000)).toBe(3), {
      timeout: 30_000,
      interval: 100,
    });
    const r = await w.stop();
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(notJson(r.stdout), 'stdout').toEqual([]);
    expect(notJson(r.stderr), 'stderr').toEqual([]);
  });
});
