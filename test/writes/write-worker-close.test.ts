import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { connectionsGone, inHandshake, unhandledRejections } from '../helpers/worker-handshake.js';
import { writeHarness } from './write-harness.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

// Issue 10 item 13: a test that ended (or a SIGTERM that came) while the worker was still connecting left BullMQ
// an unhandled "Connection is closed." and failed the run.
it('a write worker closed while its connections are still in their handshake leaves no unhandled rejection', async () => {
  const seen = unhandledRejections();
  const h = await writeHarness({ redisUrl: redis.url });
  for (let i = 0; i < 3; i++) {
    // The worker's blocking connection is a duplicate of the app's.
    const handshake = inHandshake(h.app.redis as Redis);
    const w = await h.startWorker();
    await handshake;
    await w.close();
    await connectionsGone(redis.url, h.prefix);
  }
  expect(seen).toEqual([]);
});
