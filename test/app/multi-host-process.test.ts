import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { enqueueSync } from '../../src/app/enqueue-sync.js';
import { startSimulator } from '../../src/sim/start-simulator.js';
import { pgQuery, testDatabase } from '../helpers/postgres.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { startWorker } from '../helpers/understudy-process.js';
import { tempDir } from './worker-harness.js';

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

const COLLECTIONS = ['event-instances', 'series', 'forms'] as const;
const TABLES: Record<(typeof COLLECTIONS)[number], string> = {
  'event-instances': 'event_instances',
  series: 'series',
  forms: 'forms',
};

describe('several hosts on one PostgreSQL mirror (real worker processes)', () => {
  it('3 workers on one Redis mirror 2 tenants exactly, with no 429 and no record written twice, through a kill -9', async () => {
    // The upstream's limit is the configured budget: the workers share it through Redis and must never meet a 429.
    const sim = await startSimulator({
      port: 0,
      records: 40,
      maxLimit: 10,
      tenants: 2,
      readLimit: 40,
      writeLimit: 20,
      windowMs: 2000,
    });
    onTestFinished(() => sim.close());
    sim.controls.injectFaults({ kind: 'latency', ms: 60, count: 100_000, match: { path: '/event-instances' } });
    const url = await testDatabase();
    const dir = tempDir();
    const prefix = `t-${randomUUID()}`;
    const tenants = sim.tenants.slice(0, 2);
    const budget = { reads: 40, writes: 20, windowMs: 2000 };
    const configPath = join(dir, 'config.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        baseUrl: sim.url,
        database: url,
        redis: { prefix },
        worker: { lockDurationMs: 2000, stalledIntervalMs: 1000, backoffMs: 100, concurrency: 2 },
        tenants: tenants.map((t, i) => ({ slug: t.slug, apiKeyEnv: `K${i}`, rateLimit: budget })),
      }),
    );
    const env = { K0: tenants[0]?.key, K1: tenants[1]?.key, REDIS_URL: server.url, LOG_LEVEL: 'warn' };
    const workers = [0, 1, 2].map(() => startWorker(configPath, [], env));
    for (const t of tenants)
      await enqueueSync({ redisUrl: server.url, prefix, tenant: t.slug, collections: [...COLLECTIONS], mode: 'full' });
    const live = async (table: string, tenant: string) =>
      Number(
        (await pgQuery(url, `SELECT count(*) AS n FROM ${table} WHERE tenant = ? AND deleted_at IS NULL`, [tenant]))[0]
          ?.n ?? 0,
      );
    // Mid-run, one host dies.
    await vi.waitFor(async () => expect(await live('event_instances', tenants[0]?.slug ?? '')).toBeGreaterThan(0), {
      timeout: 60_000,
      interval: 100,
    });
    await workers[0]?.stop('SIGKILL');
    const upstream = async (slug: string, key: string, c: string) => {
      const res = await fetch(`${sim.url}/partners/2026-02/${slug}/${c}?limit=1&depth=0`, {
        headers: { authorization: `users API-Key ${key}` },
      });
      return Number(((await res.json()) as { totalDocs: number }).totalDocs);
    };
    const expected = new Map<string, number>();
    for (const t of tenants)
      for (const c of COLLECTIONS) expected.set(`${t.slug}/${c}`, await upstream(t.slug, t.key, c));
    await vi.waitFor(
      async () => {
        for (const t of tenants)
          for (const c of COLLECTIONS)
            expect(await live(TABLES[c], t.slug), `${t.slug}/${c}`).toBe(expected.get(`${t.slug}/${c}`));
      },
      { timeout: 90_000, interval: 250 },
    );
    const log = sim.controls.requestLog();
    expect(log.filter((e) => e.status === 429)).toEqual([]);
    // Nothing changed upstream during the run: a record written twice (a page committed again over itself) would be
    // an update; every row must still be its first insert.
    for (const c of COLLECTIONS)
      expect(await pgQuery(url, `SELECT last_change, count(*) AS n FROM ${TABLES[c]} GROUP BY last_change`)).toEqual([
        { last_change: 'insert', n: [...expected].filter(([k]) => k.endsWith(`/${c}`)).reduce((a, [, n]) => a + n, 0) },
      ]);
    const ends = workers.slice(1).map((w) => w.stop());
    for (const end of ends) expect((await end).code).toBe(0);
  }, 150_000);
});
