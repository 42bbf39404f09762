import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { processEvents } from '../helpers/worker-handshake.js';
import { idOf, writeHarness } from '../writes/write-harness.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

/** The process warnings emitted from now until the test ends (Node emits them on the next tick). */
const warnings = () => processEvents<Error>('warning');
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('a write queue no worker drains', () => {
  it('warns once, naming the prefix, and says so when a wait runs out', async () => {
    const h = await writeHarness({ redisUrl: redis.url, prefix: `nobody-${Date.now()}` });
    const seen = warnings();
    const ei = idOf(h.upstream('event-instances')[0]);
    const first = await h.queue.updateEventInstance(h.slug, ei, { booking: { bookingLinkLabel: 'One' } });
    await h.queue.updateEventInstance(h.slug, ei, { booking: { bookingLinkLabel: 'Two' } });
    await tick();
    const ours = seen.filter((w) => (w as { code?: string }).code === 'US_NO_WORKER');
    expect(ours).toHaveLength(1);
    expect(ours[0]?.name).toBe('UnderstudyWarning');
    expect(ours[0]?.message).toBe(
      `no worker is listening on the writes queue under prefix "${h.prefix}": writes wait until a worker with ` +
        `redis.prefix "${h.prefix}" runs (a worker with another prefix drains another queue)`,
    );
    await expect(h.queue.waitForWrite(first, { timeoutMs: 200 })).rejects.toMatchObject({
      code: 'US_TIMEOUT',
      message: `write ${first} is still queued after 200 ms: no worker is listening on the writes queue under prefix "${h.prefix}"`,
    });
  });

  it('says nothing when a worker listens on the prefix', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    await h.startWorker();
    const seen = warnings();
    const ei = idOf(h.upstream('event-instances')[0]);
    const id = await h.queue.updateEventInstance(h.slug, ei, { booking: { bookingLinkLabel: 'Heard' } });
    expect(await h.queue.waitForWrite(id, { timeoutMs: 30_000 })).toMatchObject({ state: 'ok' });
    await tick();
    expect(seen.filter((w) => (w as { code?: string }).code === 'US_NO_WORKER')).toEqual([]);
  });
});
