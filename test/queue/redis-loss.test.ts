import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest';
import { createLogger } from '../../src/log.js';
import { sentinelKey, watchRedisLoss } from '../../src/queue/redis-loss.js';
import { wallClock } from '../../src/sync/schedule-clock.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis({ own: true }); // flushed below
});
afterAll(async () => {
  await server?.stop();
});

it('looks again after a recovery that failed, instead of taking the loss as handled', async () => {
  const redis = new Redis(server.url);
  onTestFinished(() => {
    redis.disconnect();
  });
  const prefix = `t-${randomUUID().slice(0, 8)}`;
  let attempts = 0;
  const watch = watchRedisLoss({
    redis,
    prefix,
    queues: [],
    intervalMs: 3_600_000,
    clock: wallClock,
    log: createLogger({ level: 'silent' }),
    recover: async () => {
      attempts++;
      if (attempts === 1) throw new Error('queue connection not back yet');
      return ['full.acme'];
    },
  });
  onTestFinished(() => watch.stop());
  expect(await watch.check()).toBeNull(); // the first look arms it
  await redis.flushall();
  await expect(watch.check()).rejects.toThrow(/not back yet/);
  expect(await redis.exists(sentinelKey(prefix))).toBe(0);
  expect(await watch.check()).toMatchObject({ schedulesRecreated: ['full.acme'] });
  expect(attempts).toBe(2);
});
