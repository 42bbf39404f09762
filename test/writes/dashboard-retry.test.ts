import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpsServer } from '../../src/ops/http-server.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { writeHarness } from './write-harness.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

const TOKEN = 'dashboard-token-for-tests';
const posts = (h: Awaited<ReturnType<typeof writeHarness>>) =>
  h.sim.controls.requestLog().filter((e) => e.method === 'POST');

describe('a completed write cannot be run again', () => {
  it('refuses Retry on a completed job of the writes queue in the dashboard', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    const w = await h.startWorker();
    const jobId = await h.queue.create(h.slug, 'series', {
      title: 'Done once',
      slug: 'done-once',
      _status: 'published',
    });
    expect(await h.settled(jobId)).toBe('completed');
    const ops = await startOpsServer({
      port: 0,
      host: '127.0.0.1',
      metrics: { text: async () => '', contentType: 'text/plain' },
      ready: async () => ({ ok: true, checks: {} }) as never,
      queues: [w.queue],
      dashboardToken: TOKEN,
    });
    try {
      const put = (path: string) =>
        fetch(`${ops.url}/queues/api/queues/${path}`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${TOKEN}` },
        });
      const one = await put(`writes/${encodeURIComponent(jobId)}/retry`);
      expect(one.status).toBe(409);
      expect(((await one.json()) as { error: string }).error).toMatch(/completed write/);
      expect((await put('writes/retry/completed')).status).toBe(409);
      expect(await w.queue.getJobState(jobId)).toBe('completed');
      expect(posts(h)).toHaveLength(1);
    } finally {
      await ops.close();
    }
  });

  it('does not send a completed write again when its job is re-run anyway (an older dashboard, a script)', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    const w = await h.startWorker();
    const jobId = await h.queue.create(h.slug, 'series', {
      title: 'Not twice',
      slug: 'not-twice',
      _status: 'published',
    });
    expect(await h.settled(jobId)).toBe('completed');
    const before = h.logRow(jobId);
    const job = await w.queue.getJob(jobId);
    await job?.retry('completed');
    expect(await h.settled(jobId)).toBe('completed');
    const again = await w.queue.getJob(jobId);
    expect(again?.returnvalue).toMatchObject({ status: 'ok', note: 'already applied: not sent again' });
    expect(posts(h)).toHaveLength(1);
    expect(h.upstream('series').filter((d) => d.slug === 'not-twice')).toHaveLength(1);
    expect(h.logRow(jobId)).toEqual(before);
  });
});
