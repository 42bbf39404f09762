import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createMemoryRateGate } from '../../src/partners/memory-rate-gate.js';
import type { RateBudget, RateGate } from '../../src/partners/rate-gate.js';
import { createRedisRateGate } from '../../src/queue/redis-rate-gate.js';
import { startSimulator } from '../../src/sim/start-simulator.js';
import { tenantSlug } from '../../src/vocabulary/ids.js';
import { testPool } from '../helpers/http-pool.js';
import { createHttpPartnersClient } from '../helpers/partners-client.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

const BUDGET: RateBudget = { reads: 2, writes: 1, windowMs: 300 };

/**
 * Two reads granted together, the first of them held up 200 ms before the upstream counts it (what a busy CPU or
 * a slow connection does between a grant and the request arriving), then two more reads. A gate counting from
 * the grant admits both later reads one window after the first two grants, while the delayed one is still in the
 * upstream's window: a 429. Counted from the answers, the same budget as the upstream's draws none.
 */
async function delayedFirstRequest(gate: RateGate): Promise<{ rateLimited: number; reads: number }> {
  const sim = await startSimulator({ tenants: 1, records: 5, readLimit: BUDGET.reads, windowMs: BUDGET.windowMs });
  onTestFinished(() => sim.close());
  const tenant = sim.tenants[0];
  if (!tenant) throw new Error('no tenant');
  sim.controls.beforeRequest(async ({ n }) => {
    if (n === 1) await delay(200);
  });
  const client = createHttpPartnersClient({
    dispatcher: testPool(),
    baseUrl: sim.url,
    tenant: tenantSlug(tenant.slug),
    apiKey: tenant.key,
    gate,
    retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
  });
  const signal = new AbortController().signal;
  let rateLimited = 0;
  const read = () =>
    client.listPage({ collection: 'series', limit: 1 }, { signal, onRateLimited: () => rateLimited++ });
  await Promise.all([read(), read(), read(), read()]);
  return { rateLimited, reads: sim.controls.counters().total.reads };
}

describe('a gate with the upstream budget, whatever the delay before a request arrives', () => {
  it('draws no 429 through the in-process gate', async () => {
    const gate = createMemoryRateGate(BUDGET);
    onTestFinished(() => gate.close());
    expect(await delayedFirstRequest(gate)).toEqual({ rateLimited: 0, reads: 4 });
  });

  it('draws no 429 through the Redis gate (workers, and inline sync with Redis configured)', async () => {
    const redis = new Redis(server.url, { maxRetriesPerRequest: null });
    onTestFinished(() => {
      redis.disconnect();
    });
    const gate = createRedisRateGate({ redis, keyHash: 'delayed', budget: BUDGET, prefix: `t-${randomUUID()}` });
    expect(await delayedFirstRequest(gate)).toEqual({ rateLimited: 0, reads: 4 });
  });
});
