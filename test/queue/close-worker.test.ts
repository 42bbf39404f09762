import { randomUUID } from 'node:crypto';
import { Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeWorker } from '../../src/queue/close-worker.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { connectionsGone, handshaking, unhandledRejections } from '../helpers/worker-handshake.js';

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

describe('closeWorker', () => {
  // A bare worker.close() at that moment leaves "Connection is closed." unhandled, every time (issue 10 item 13).
  it('closes a worker caught mid-handshake without an unhandled rejection', async () => {
    const seen = unhandledRejections();
    for (let i = 0; i < 5; i++) {
      const { redis, inHandshake } = handshaking(server.url);
      const prefix = `t-${randomUUID().slice(0, 8)}`;
      const worker = new Worker('close-test', async () => undefined, { connection: redis, prefix });
      worker.on('error', () => {});
      await inHandshake;
      // What a SIGTERM just after start, or a test that ends at once, can do.
      await closeWorker(worker);
      await connectionsGone(server.url, prefix);
    }
    expect(seen).toEqual([]);
  });
});
