import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { enqueueSync } from '../../src/app/enqueue-sync.js';
import { createWriteQueue } from '../../src/queue/write-queue.js';
import { startSimulator } from '../../src/sim/start-simulator.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { collect, spawnCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/sync-harness.js';
import { parsePrometheus, sampleValue } from './parse-prometheus.js';

let redisServer: TestRedis;
beforeAll(async () => {
  redisServer = await startRedis();
});
afterAll(async () => {
  await redisServer?.stop();
});

const freePort = async (): Promise<number> => {
  const { createServer } = await import('node:net');
  const s = createServer().listen(0, '127.0.0.1');
  await new Promise((r) => s.once('listening', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
};

const runs = (db: string, tenant: string, status: 'ok' | 'failed'): number => {
  try {
    const raw = new Database(db, { readonly: true, fileMustExist: true });
    try {
      return (
        raw.prepare('SELECT count(*) AS n FROM sync_runs WHERE tenant = ? AND status = ?').get(tenant, status) as {
          n: number;
        }
      ).n;
    } finally {
      raw.close();
    }
  } catch {
    return 0;
  }
};

describe('worker config reload on SIGHUP', () => {
  it('adds a tenant with its schedule and key, and keeps the old config when the new file is bad', async () => {
    const sim = await startSimulator({ port: 0, records: 4, readLimit: 0, writeLimit: 0, tenants: 2 });
    onTestFinished(() => sim.close());
    const [a, b] = sim.tenants;
    if (!a || !b) throw new Error('the simulator has two tenants');
    const dir = tempDir();
    const db = join(dir, 'mirror.db');
    const configPath = join(dir, 'understudy.json');
    const envFile = join(dir, 'keys.env');
    const prefix = `t-${randomUUID()}`;
    const schedule = { incrementalEveryMinutes: 60, fullCron: null };
    const config = (tenants: object[]) =>
      JSON.stringify({ baseUrl: sim.url, database: db, redis: { prefix }, tenants });
    writeFileSync(configPath, config([{ slug: a.slug, apiKeyEnv: 'KEY_A', schedule }]));
    writeFileSync(envFile, `KEY_A=${a.key}\n`);

    const port = await freePort();
    const worker = spawnCli(['worker', '--config', configPath, '--http', String(port)], {
      env: { REDIS_URL: redisServer.url, UNDERSTUDY_ENV_FILE: envFile, LOG_LEVEL: 'info' },
    });
    const done = collect(worker);
    let log = '';
    worker.stderr?.on('data', (d: Buffer) => {
      log += d.toString();
    });

    const redis = new Redis(redisServer.url, { maxRetriesPerRequest: null });
    onTestFinished(() => {
      redis.disconnect();
    });
    const queue = new Queue('sync', { connection: redis, prefix });
    onTestFinished(() => queue.close());
    const schedulerIds = async () => (await queue.getJobSchedulers(0, -1)).map((s) => s.id ?? s.key).sort();

    // The first tenant's scheduler fires at once: its collections sync.
    await vi.waitFor(() => expect(runs(db, a.slug, 'ok')).toBeGreaterThan(0), { timeout: 30_000, interval: 100 });
    expect(await schedulerIds()).toEqual([`incremental.${a.slug}`]);
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);

    // A bad file: refused, logged, the old config kept.
    writeFileSync(configPath, '{ "baseUrl": ');
    worker.kill('SIGHUP');
    await vi.waitFor(() => expect(log).toContain('config reload refused'), { timeout: 30_000, interval: 50 });
    // A tenant whose key variable is not set anywhere: refused the same way.
    writeFileSync(
      configPath,
      config([
        { slug: a.slug, apiKeyEnv: 'KEY_A', schedule },
        { slug: b.slug, apiKeyEnv: 'KEY_B', schedule },
      ]),
    );
    worker.kill('SIGHUP');
    await vi.waitFor(() => expect(log.match(/config reload refused/g)).toHaveLength(2), {
      timeout: 30_000,
      interval: 50,
    });
    expect(log).toContain('KEY_B');
    expect(await schedulerIds()).toEqual([`incremental.${a.slug}`]);

    // The key lands in the env file: the next SIGHUP adds the tenant, its scheduler and its sync.
    writeFileSync(envFile, `KEY_A=${a.key}\nKEY_B=${b.key}\n`);
    worker.kill('SIGHUP');
    await vi.waitFor(
      async () => expect(await schedulerIds()).toEqual([`incremental.${a.slug}`, `incremental.${b.slug}`].sort()),
      {
        timeout: 30_000,
        interval: 50,
      },
    );
    await vi.waitFor(() => expect(runs(db, b.slug, 'ok')).toBeGreaterThan(0), { timeout: 30_000, interval: 100 });

    // Removing the first tenant removes its scheduler; the process kept running throughout.
    writeFileSync(configPath, config([{ slug: b.slug, apiKeyEnv: 'KEY_B', schedule }]));
    worker.kill('SIGHUP');
    await vi.waitFor(async () => expect(await schedulerIds()).toEqual([`incremental.${b.slug}`]), {
      timeout: 30_000,
      interval: 50,
    });
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);

    worker.kill('SIGTERM');
    const result = await done;
    expect(result.code).toBe(0);
    expect(log).not.toContain(a.key);
    expect(log).not.toContain(b.key);
  });

  it('rotates a key: after SIGHUP the client of the tenant uses the key now in the env file', async () => {
    const sim = await startSimulator({ port: 0, records: 4, readLimit: 0, writeLimit: 0, tenants: 1 });
    onTestFinished(() => sim.close());
    const [a] = sim.tenants;
    if (!a) throw new Error('the simulator has a tenant');
    const dir = tempDir();
    const db = join(dir, 'mirror.db');
    const configPath = join(dir, 'understudy.json');
    const envFile = join(dir, 'keys.env');
    const prefix = `t-${randomUUID()}`;
    writeFileSync(
      configPath,
      JSON.stringify({
        baseUrl: sim.url,
        database: db,
        redis: { prefix },
        worker: { attempts: 1 },
        tenants: [{ slug: a.slug, apiKeyEnv: 'KEY_A', collections: ['series'] }],
      }),
    );
    writeFileSync(envFile, 'KEY_A=revoked-key-0000000000000000\n');
    const port = await freePort();
    const worker = spawnCli(['worker', '--config', configPath, '--http', String(port)], {
      env: { REDIS_URL: redisServer.url, UNDERSTUDY_ENV_FILE: envFile, LOG_LEVEL: 'info' },
    });
    const done = collect(worker);
    let log = '';
    worker.stderr?.on('data', (d: Buffer) => {
      log += d.toString();
    });
    await vi.waitFor(() => expect(log).toContain('worker starting'), { timeout: 30_000, interval: 50 });
    const enqueue = () =>
      enqueueSync({ redisUrl: redisServer.url, prefix, tenant: a.slug, collections: ['series'], mode: 'incremental' });

    await enqueue();
    await vi.waitFor(() => expect(runs(db, a.slug, 'failed')).toBe(1), { timeout: 30_000, interval: 100 });
    expect(runs(db, a.slug, 'ok')).toBe(0);

    writeFileSync(envFile, `KEY_A=${a.key}\n`);
    worker.kill('SIGHUP');
    await vi.waitFor(() => expect(log).toContain('config reloaded'), { timeout: 30_000, interval: 50 });
    await enqueue();
    await vi.waitFor(() => expect(runs(db, a.slug, 'ok')).toBe(1), { timeout: 30_000, interval: 100 });

    // Writes use the new key too.
    const writes = await createWriteQueue({ redisUrl: redisServer.url, prefix });
    onTestFinished(() => writes.close());
    await writes.create(a.slug, 'series', { title: 'After rotation', slug: 'after-rotation' });
    const scrape = async () => parsePrometheus(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
    await vi.waitFor(
      async () =>
        expect(
          sampleValue(await scrape(), 'understudy_writes_total', { tenant: a.slug, op: 'create', status: 'ok' }),
        ).toBe(1),
      { timeout: 30_000, interval: 100 },
    );
    // The worker's own metrics saw the refused key, then the accepted one.
    const e = await scrape();
    const requests = (status: string) =>
      e.samples
        .filter(
          (x) =>
            x.name === 'understudy_upstream_requests_total' && x.labels.tenant === a.slug && x.labels.status === status,
        )
        .reduce((n, x) => n + x.value, 0);
    expect(requests('401')).toBeGreaterThan(0);
    expect(requests('200')).toBeGreaterThan(0);
    expect(requests('201')).toBe(1);
    expect(
      sampleValue(e, 'understudy_records_upserted_total', { tenant: a.slug, collection: 'series', change: 'inserted' }),
    ).toBeGreaterThan(0);
    expect(
      sampleValue(e, 'understudy_sync_last_success_timestamp_seconds', { tenant: a.slug, collection: 'series' }),
    ).toBeGreaterThan(0);
    expect(sampleValue(e, 'understudy_queue_jobs', { queue: 'writes', state: 'completed' })).toBe(1);

    worker.kill('SIGTERM');
    expect((await done).code).toBe(0);
    expect(log).not.toContain(a.key);
  });
});
