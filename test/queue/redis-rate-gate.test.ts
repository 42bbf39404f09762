import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createRedisRateGate } from '../../src/queue/redis-rate-gate.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

const connect = () => {
  const r = new Redis(server.url, { maxRetriesPerRequest: null });
  onTestFinished(() => {
    r.disconnect();
  });
  return r;
};

describe('redis rate gate', () => {
  it('never admits more than the budget in a window across two gates on one key', async () => {
    const prefix = `t-${randomUUID()}`;
    const budget = { reads: 5, writes: 2, windowMs: 60_000 };
    const a = createRedisRateGate({ redis: connect(), keyHash: 'abc123', budget, prefix });
    const b = createRedisRateGate({ redis: connect(), keyHash: 'abc123', budget, prefix });
    const stop = new AbortController();
    const admitted: string[] = [];
    const calls = Array.from({ length: 12 }, (_, i) =>
      (i % 2 ? a : b).acquire('read', { signal: stop.signal }).then(
        () => admitted.push(`r${i}`),
        (err: { code?: string }) => err.code,
      ),
    );
    const writes = Array.from({ length: 4 }, () =>
      a.acquire('write', { signal: stop.signal }).then(
        () => 'ok',
        (err: { code?: string }) => err.code,
      ),
    );
    // Everyone has asked once the window holds the budget: 5 reads and 2 writes, counted apart.
    const probe = connect();
    await expect.poll(() => probe.zcard(`${prefix}:rate:abc123:read`)).toBe(5);
    await expect.poll(() => probe.zcard(`${prefix}:rate:abc123:write`)).toBe(2);
    stop.abort();
    const outcomes = await Promise.all(calls);
    expect(admitted).toHaveLength(5);
    expect(outcomes.filter((o) => o === 'US_ABORTED')).toHaveLength(7);
    expect((await Promise.all(writes)).sort()).toEqual(['US_ABORTED', 'US_ABORTED', 'ok', 'ok']);
  });

  it('admits the rest as the window rolls, waiting on timers rather than polling', async () => {
    const prefix = `t-${randomUUID()}`;
    const budget = { reads: 3, writes: 1, windowMs: 300 };
    const redis = connect();
    const gates = [1, 2].map(() =>
      createRedisRateGate({ redis: connect(), keyHash: 'k2', budget, prefix, marginMs: 0 }),
    );
    const before = await scriptCalls(redis);
    const signal = new AbortController().signal;
    const waited = await Promise.all(Array.from({ length: 9 }, (_, i) => gates[i % 2]!.acquire('read', { signal })));
    expect(waited.filter((w) => w === 0)).toHaveLength(3);
    expect(Math.max(...waited)).toBeGreaterThanOrEqual(2 * budget.windowMs - 50);
    // 9 admissions; each waiter re-asks once per slot freed, never in a tight loop.
    expect((await scriptCalls(redis)) - before).toBeLessThan(9 * 4);
  });

  it('holds every process on a key while another one pauses it (a 429)', async () => {
    const prefix = `t-${randomUUID()}`;
    const budget = { reads: 100, writes: 20, windowMs: 60_000 };
    const a = createRedisRateGate({ redis: connect(), keyHash: 'k3', budget, prefix });
    const b = createRedisRateGate({ redis: connect(), keyHash: 'k3', budget, prefix });
    const other = createRedisRateGate({ redis: connect(), keyHash: 'k4', budget, prefix });
    await a.pause(400);
    const signal = new AbortController().signal;
    const [waitedRead, waitedWrite, otherKey] = await Promise.all([
      b.acquire('read', { signal }),
      b.acquire('write', { signal }),
      other.acquire('read', { signal }),
    ]);
    expect(waitedRead).toBeGreaterThanOrEqual(300);
    expect(waitedWrite).toBeGreaterThanOrEqual(300);
    expect(otherKey).toBe(0);
  });

  it('counts a request in flight a lease ahead, then from its answer once settled, on Redis time', async () => {
    const prefix = `t-${randomUUID()}`;
    const redis = connect();
    const budget = { reads: 2, writes: 1, windowMs: 60_000 };
    const gate = createRedisRateGate({ redis: connect(), keyHash: 'k5', budget, prefix });
    const signal = new AbortController().signal;
    await gate.acquire('read', { signal });
    await gate.acquire('read', { signal });
    const scores = async () =>
      (await redis.zrange(`${prefix}:rate:k5:read`, 0, -1, 'WITHSCORES')).filter((_, i) => i % 2 === 1).map(Number);
    const [t] = (await redis.time()).map(Number);
    const redisNow = (t ?? 0) * 1000;
    // In flight: a whole window ahead, so no new window can start before the answer says when it was counted.
    for (const score of await scores()) expect(score).toBeGreaterThan(redisNow + budget.windowMs / 2);
    gate.settle('read');
    await expect.poll(async () => (await scores()).filter((s) => s <= redisNow + budget.windowMs / 2)).toHaveLength(1);
    gate.settle('read');
    await expect.poll(async () => (await scores()).filter((s) => s <= redisNow + budget.windowMs / 2)).toHaveLength(2);
    // Settling more than was granted changes nothing.
    gate.settle('read');
    expect(await redis.zcard(`${prefix}:rate:k5:read`)).toBe(2);
  });

  it('forgets a grant given back unsent, on every process of the key', async () => {
    const prefix = `t-${randomUUID()}`;
    const redis = connect();
    const budget = { reads: 2, writes: 1, windowMs: 60_000 };
    const a = createRedisRateGate({ redis: connect(), keyHash: 'k6', budget, prefix });
    const b = createRedisRateGate({ redis: connect(), keyHash: 'k6', budget, prefix });
    const signal = new AbortController().signal;
    await a.acquire('write', { signal });
    expect(await redis.zcard(`${prefix}:rate:k6:write`)).toBe(1);
    a.release('write');
    await expect.poll(() => redis.zcard(`${prefix}:rate:k6:write`)).toBe(0);
    // The other process gets the write at once; giving back more than was granted changes nothing.
    expect(await b.acquire('write', { signal })).toBe(0);
    a.release('write');
    expect(await redis.zcard(`${prefix}:rate:k6:write`)).toBe(1);
  });

  it('names keys by hash only and keeps the longer of two pauses', async () => {
    const prefix = `t-${randomUUID()}`;
    const redis = connect();
    const gate = createRedisRateGate({
      redis,
      keyHash: 'feed01',
      budget: { reads: 1, writes: 1, windowMs: 1000 },
      prefix,
    });
    await gate.pause(60_000);
    await gate.pause(10);
    expect(await redis.pttl(`${prefix}:rate:feed01:pause`)).toBeGreaterThan(50_000);
    expect(() =>
      createRedisRateGate({
        redis,
        keyHash: 'users API-Key secret',
        budget: { reads: 1, writes: 1, windowMs: 1 },
        prefix,
      }),
    ).toThrow(TypeError);
  });

  it('holds the key for a whole window when Redis loses its data under it, instead of admitting a new budget', async () => {
    const prefix = `t-${randomUUID()}`;
    const budget = { reads: 3, writes: 1, windowMs: 600_000 };
    const gate = createRedisRateGate({ redis: connect(), keyHash: 'lost1', budget, prefix, marginMs: 0 });
    const stop = new AbortController();
    onTestFinished(() => stop.abort());
    for (let i = 0; i < 3; i++) await gate.acquire('read', { signal: stop.signal });
    // A flush of everything (here: of this gate's keys, so other tests' data stays).
    const probe = connect();
    const keys = await probe.keys(`${prefix}:*`);
    expect(keys.sort()).toEqual([`${prefix}:rate:lost1:epoch`, `${prefix}:rate:lost1:read`]);
    await probe.del(...keys);
    let admitted = 0;
    const next = gate.acquire('read', { signal: stop.signal }).then(
      () => admitted++,
      () => undefined,
    );
    // Paused for the whole window: nothing more is admitted although the window set is empty.
    await expect.poll(() => probe.pttl(`${prefix}:rate:lost1:pause`)).toBeGreaterThan(590_000);
    expect(await probe.zcard(`${prefix}:rate:lost1:read`)).toBe(0);
    stop.abort();
    await next;
    expect(admitted).toBe(0);
    // A gate meeting the key for the first time (a fresh process) creates the epoch without pausing.
    const fresh = createRedisRateGate({ redis: connect(), keyHash: 'fresh1', budget, prefix });
    await fresh.acquire('read', { signal: new AbortController().signal });
    expect(await probe.exists(`${prefix}:rate:fresh1:pause`)).toBe(0);
  });
});

async function scriptCalls(redis: Redis): Promise<number> {
  const info = await redis.info('commandstats');
  const sum = (name: string) => Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
  return sum('evalsha') + sum('eval');
}
