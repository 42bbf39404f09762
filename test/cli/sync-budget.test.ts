import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { runSync } from '../../src/app/run-sync.js';
import { resolveInvocation } from '../../src/cli/sync-command.js';
import { keyHash } from '../../src/partners/key-hash.js';
import { startSimulator } from '../../src/sim/start-simulator.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { tempDir } from '../helpers/sync-harness.js';

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

async function sim() {
  const s = await startSimulator({ port: 0, readLimit: 0, writeLimit: 0, records: 10, routes: 'full' });
  onTestFinished(() => s.close());
  const t = s.tenants[0];
  if (!t) throw new Error('no tenant');
  return { s, t };
}

const probe = () => {
  const r = new Redis(server.url, { maxRetriesPerRequest: null });
  onTestFinished(() => {
    r.disconnect();
  });
  return r;
};

/** A config file for one tenant of the simulator, with `extra` top-level fields (e.g. `redis`). */
function configFile(url: string, slug: string, extra: object = {}): string {
  const dir = tempDir();
  const path = join(dir, 'c.json');
  writeFileSync(
    path,
    JSON.stringify({
      baseUrl: url,
      database: join(dir, 'm.db'),
      tenants: [{ slug, apiKeyEnv: 'K', collections: ['series', 'events'] }],
      ...extra,
    }),
  );
  return path;
}

const signal = () => new AbortController().signal;

describe('inline sync and the shared budget', () => {
  it('spends the key budget in Redis when REDIS_URL is set, each request counted from its answer', async () => {
    const { s, t } = await sim();
    const redis = probe();
    const windowKey = `understudy:rate:${keyHash(t.key)}:read`;
    await redis.del(windowKey);
    const env = { K: t.key, REDIS_URL: server.url };
    const inv = resolveInvocation({ config: configFile(s.url, t.slug) }, env);
    const before = Date.now();
    const { failure } = await runSync(inv, { signal: signal(), env });
    expect(failure).toBeNull();
    const reads = s.controls.counters().total.reads;
    expect(reads).toBeGreaterThan(0);
    // Every request is in the shared window (the openapi read is gated too, though the upstream does not count it).
    expect(await redis.zcard(windowKey)).toBeGreaterThanOrEqual(reads);
    // Settled: each scored at its answer, none left in flight (scored a lease ahead).
    const scores = (await redis.zrange(windowKey, 0, -1, 'WITHSCORES')).filter((_, i) => i % 2 === 1).map(Number);
    for (const score of scores) {
      expect(score).toBeGreaterThanOrEqual(before - 1000);
      expect(score).toBeLessThanOrEqual(Date.now() + 1000);
    }
  });

  it('uses the config redis section without REDIS_URL', async () => {
    const { s, t } = await sim();
    const prefix = `t-${randomUUID()}`;
    const env = { K: t.key };
    const inv = resolveInvocation({ config: configFile(s.url, t.slug, { redis: { url: server.url, prefix } }) }, env);
    const { failure } = await runSync(inv, { signal: signal(), env });
    expect(failure).toBeNull();
    expect(await probe().zcard(`${prefix}:rate:${keyHash(t.key)}:read`)).toBeGreaterThan(0);
  });

  it('keeps the budget in the process with --local-budget', async () => {
    const { s, t } = await sim();
    const prefix = `t-${randomUUID()}`;
    const env = { K: t.key, REDIS_URL: server.url };
    const inv = resolveInvocation(
      { config: configFile(s.url, t.slug, { redis: { prefix } }), 'local-budget': true },
      env,
    );
    expect(inv.localBudget).toBe(true);
    const { failure } = await runSync(inv, { signal: signal(), env });
    expect(failure).toBeNull();
    expect(s.controls.counters().total.reads).toBeGreaterThan(0);
    expect(await probe().keys(`${prefix}:*`)).toEqual([]);
  });

  it('refuses to sync when the configured Redis does not answer, naming --local-budget, before any request', async () => {
    const { s, t } = await sim();
    const env = { K: t.key, REDIS_URL: 'redis://127.0.0.1:1' };
    const inv = resolveInvocation({ config: configFile(s.url, t.slug) }, env);
    await expect(runSync(inv, { signal: signal(), env })).rejects.toMatchObject({
      code: 'US_REDIS',
      message: expect.stringContaining('--local-budget'),
    });
    expect(s.controls.requestLog()).toEqual([]);
  });

  it('counts a 429 per collection in the report (rateLimited) and finishes after the pause', async () => {
    const { s, t } = await sim();
    s.controls.injectFaults({ kind: 'rate-limit', retryAfterSeconds: 0, count: 1, match: { path: '/series' } });
    const env = { K: t.key };
    const inv = resolveInvocation({ config: configFile(s.url, t.slug) }, env);
    const { reports, failure } = await runSync(inv, { signal: signal(), env });
    expect(failure).toBeNull();
    const byName = Object.fromEntries((reports[0]?.collections ?? []).map((c) => [c.name, c]));
    expect(byName.series).toMatchObject({ rateLimited: 1 });
    expect(byName.series?.error).toBeUndefined();
    expect(byName.events).toMatchObject({ rateLimited: 0 });
  });
});
