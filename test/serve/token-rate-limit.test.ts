import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenRateLimit } from '../../src/serve/token-rate-limit.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';

// The token budget is counted in Redis in leases: two processes (two limiters on their own connections) together
// pass exactly the limit, and a request most often passes without a round trip to Redis.

let server: TestRedis;
const clients: Redis[] = [];
beforeAll(async () => {
  server = await startRedis({ own: true });
});
afterAll(async () => {
  for (const c of clients) c.disconnect();
  await server?.stop();
});

const connect = () => {
  const r = new Redis(server.url, { lazyConnect: false });
  clients.push(r);
  return r;
};
const evalCalls = async (r: Redis): Promise<number> => {
  const line = ((await r.info('commandstats')) as string).split('\n').find((l) => l.startsWith('cmdstat_eval:'));
  return Number(/calls=(\d+)/.exec(line ?? '')?.[1] ?? 0);
};
// A moment early in a window, so every request below falls in one.
const NOW = 60_000 * 29_000_000 + 1000;

describe('tokenRateLimit', () => {
  it('passes exactly the limit across two processes, in far fewer round trips than requests', async () => {
    const prefix = `t-${randomUUID()}`;
    const limit = 5000;
    const a = tokenRateLimit(connect(), prefix, () => limit);
    const b = tokenRateLimit(connect(), prefix, () => limit);
    const before = await evalCalls(clients[0] as Redis);
    let passed = 0;
    let refusedBoth = false;
    for (let i = 0; !refusedBoth && i < 3 * limit; i++) {
      const [x, y] = await Promise.all([a('bench', NOW + i), b('bench', NOW + i)]);
      passed += Number(x.allowed) + Number(y.allowed);
      refusedBoth = !x.allowed && !y.allowed;
    }
    expect(refusedBoth).toBe(true);
    expect(passed).toBe(limit);
    const trips = (await evalCalls(clients[0] as Redis)) - before;
    expect(trips).toBeLessThan(limit / 10);
    // Refused locally once the window is spent: no further round trip.
    const after = await evalCalls(clients[0] as Redis);
    for (let i = 0; i < 50; i++) expect((await a('bench', NOW + 10_000)).allowed).toBe(false);
    expect(await evalCalls(clients[0] as Redis)).toBe(after);
    // The next window is whole again.
    expect((await a('bench', NOW + 60_000)).allowed).toBe(true);
  });

  it('counts one by one near a small limit: remaining goes down by one whichever process answers', async () => {
    const prefix = `t-${randomUUID()}`;
    const a = tokenRateLimit(connect(), prefix, () => 10);
    const b = tokenRateLimit(connect(), prefix, () => 10);
    const seen: number[] = [];
    for (let i = 0; i < 10; i++) {
      const d = await (i % 2 ? b : a)('reader', NOW);
      expect(d.allowed).toBe(true);
      seen.push(d.remaining);
    }
    expect(seen).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    for (const f of [a, b]) expect(await f('reader', NOW)).toMatchObject({ allowed: false, remaining: 0, resetS: 59 });
    // Each token keeps its own budget.
    expect((await a('writer', NOW)).allowed).toBe(true);
  });

  it('many requests at once wait for one reservation instead of each making their own', async () => {
    const prefix = `t-${randomUUID()}`;
    const r = connect();
    const f = tokenRateLimit(r, prefix, () => 1_000_000);
    const before = await evalCalls(r);
    const all = await Promise.all(Array.from({ length: 100 }, () => f('many', NOW)));
    expect(all.every((d) => d.allowed)).toBe(true);
    expect((await evalCalls(r)) - before).toBe(1);
  });
});
