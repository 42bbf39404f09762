import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../src/config/config-schema.js';
import { listFailedWrites } from '../../src/queue/failed-writes.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { idOf, writeHarness } from './write-harness.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

describe('a write that keeps getting 429s', () => {
  it('fails once the upstream asks for a wait past writes.maxRateLimitWaitMs, listed by writes failed', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    // Retry-After 1 s on every answer; the client waits out 3 itself (capped at 20 ms), the 4th reaches the job.
    h.sim.controls.injectFaults({ kind: 'rate-limit', retryAfterSeconds: 1, count: 1000, match: { method: 'PATCH' } });
    const w = await h.startWorker({ maxRateLimitWaitMs: 500 });
    const id = idOf(h.upstream('event-instances')[0]);
    const jobId = await h.queue.update(h.slug, 'event-instances', id, { ticketingSystemId: 'never' });
    expect(await h.settled(jobId)).toBe('failed');
    expect(h.logRow(jobId)).toMatchObject({
      status: 'failed',
      error_code: 'US_RATE_LIMITED',
      upstream_status: 429,
      attempts: 0,
    });
    const failed = await listFailedWrites(w.queue, null);
    expect(failed.map((f) => f.jobId)).toEqual([jobId]);
    expect(failed[0]?.reason).toMatch(/rate limited: still 429 .* past writes\.maxRateLimitWaitMs \(500 ms\)/);
  });

  it('adds up the waits of successive 429s', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    // Retry-After 0: each round is short, but the rounds add up past a bound of 1 ms.
    h.sim.controls.injectFaults({
      kind: 'rate-limit',
      retryAfterSeconds: 0,
      count: 100_000,
      match: { method: 'PATCH' },
    });
    await h.startWorker({ maxRateLimitWaitMs: 1 });
    const jobId = await h.queue.update(h.slug, 'event-instances', idOf(h.upstream('event-instances')[0]), {
      ticketingSystemId: 'never',
    });
    expect(await h.settled(jobId, 30_000)).toBe('failed');
    expect(h.logRow(jobId)).toMatchObject({ status: 'failed', error_code: 'US_RATE_LIMITED' });
  });

  it('defaults writes.maxRateLimitWaitMs to one hour and refuses a negative value', () => {
    const base = { baseUrl: 'http://127.0.0.1:1', tenants: [{ slug: 'acme', apiKeyEnv: 'K' }] };
    expect(v.parse(ConfigSchema, { ...base, writes: {} }).writes?.maxRateLimitWaitMs).toBe(3_600_000);
    const bad = v.safeParse(ConfigSchema, { ...base, writes: { maxRateLimitWaitMs: -1 } });
    expect(bad.success).toBe(false);
    if (!bad.success) expect(v.summarize(bad.issues)).toMatch(/writes\.maxRateLimitWaitMs/);
  });
});
