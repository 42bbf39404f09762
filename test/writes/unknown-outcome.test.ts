import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorsFailTheCalls } from '../../src/queue/error-listeners.js';
import { retryWrite, showWrite } from '../../src/queue/failed-writes.js';
import { createRecordOrder } from '../../src/queue/redis-record-order.js';
import { isPendingJob, openWritesQueue } from '../../src/queue/write-queue.js';
import { openWriteLog } from '../../src/store/open-mirror.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { idOf, type WriteHarness, writeHarness } from './write-harness.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

const requests = (h: WriteHarness, method: string, path: string) =>
  h.sim.controls.requestLog().filter((e) => e.method === method && e.path.includes(path));

/** `writes retry` as the CLI runs it, on its own connection. */
async function retry(h: WriteHarness, jobId: string, resend = false) {
  const conn = new Redis(redis.url, { maxRetriesPerRequest: null });
  const queue = openWritesQueue(conn, h.prefix, errorsFailTheCalls);
  const log = await openWriteLog(h.dbPath);
  try {
    const order = createRecordOrder({ redis: conn, prefix: h.prefix, isPending: (id) => isPendingJob(queue, id) });
    await retryWrite(queue, order, log, jobId, resend ? { resend: true } : {});
    return await showWrite(queue, log, jobId);
  } finally {
    await log.close();
    await queue.close();
    await conn.quit();
  }
}

describe('a create whose outcome is unknown is looked up before it is sent again', () => {
  it('sends a create answered 504 after being applied (twice in a row) exactly once', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    h.sim.controls.injectFaults({
      kind: 'status',
      status: 504,
      after: true,
      count: 2,
      match: { method: 'POST', path: '/series' },
    });
    await h.startWorker();
    const jobId = await h.queue.create(h.slug, 'series', {
      title: 'Gateway timeout',
      slug: 'gateway-timeout',
      _status: 'published',
    });
    expect(await h.settled(jobId)).toBe('completed');
    const made = h.upstream('series').filter((d) => d.slug === 'gateway-timeout');
    expect(made).toHaveLength(1);
    expect(requests(h, 'POST', '/series')).toHaveLength(1);
    // The lookup reads drafts too: a Payload-style upstream creates drafts unless told otherwise.
    const lookups = requests(h, 'GET', 'where');
    expect(lookups).toHaveLength(1);
    expect(lookups[0]?.path).toContain('draft=true');
    expect(h.logRow(jobId)).toMatchObject({
      status: 'ok',
      attempts: 2,
      note: 'found after unknown outcome',
      result_id: idOf(made[0]),
    });
    expect(h.query('SELECT job_id FROM write_log WHERE job_id = ?', jobId)).toHaveLength(1);
    const rows = h.query<{ id: string }>("SELECT id FROM series WHERE json_extract(doc, '$.slug') = 'gateway-timeout'");
    expect(rows).toEqual([{ id: idOf(made[0]) }]);
  });

  it.each([500, 502, 503])('looks before resending a create answered %i', async (status) => {
    const h = await writeHarness({ redisUrl: redis.url });
    h.sim.controls.injectFaults({ kind: 'status', status, after: true, count: 1, match: { method: 'POST' } });
    await h.startWorker();
    const jobId = await h.queue.create(h.slug, 'series', {
      title: `Answered ${status}`,
      slug: `answered-${status}`,
      _status: 'published',
    });
    expect(await h.settled(jobId)).toBe('completed');
    expect(h.upstream('series').filter((d) => d.slug === `answered-${status}`)).toHaveLength(1);
    expect(requests(h, 'POST', '/series')).toHaveLength(1);
  });

  it('looks before resending a create whose 2xx body broke off mid-read', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    h.sim.controls.injectFaults({ kind: 'malformed', after: true, count: 1, match: { method: 'POST' } });
    await h.startWorker();
    const jobId = await h.queue.create(h.slug, 'series', {
      title: 'Broken body',
      slug: 'broken-body',
      _status: 'published',
    });
    expect(await h.settled(jobId)).toBe('completed');
    expect(h.upstream('series').filter((d) => d.slug === 'broken-body')).toHaveLength(1);
    expect(requests(h, 'POST', '/series')).toHaveLength(1);
    expect(h.logRow(jobId)).toMatchObject({ status: 'ok', note: 'found after unknown outcome' });
  });

  it('sends again when the lookup after a 503 shows it was not applied', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    h.sim.controls.injectFaults({ kind: 'status', status: 503, count: 1, match: { method: 'POST' } });
    await h.startWorker();
    const jobId = await h.queue.create(h.slug, 'series', {
      title: 'Not applied',
      slug: 'not-applied',
      _status: 'published',
    });
    expect(await h.settled(jobId)).toBe('completed');
    expect(h.upstream('series').filter((d) => d.slug === 'not-applied')).toHaveLength(1);
    expect(requests(h, 'POST', '/series').map((e) => e.status)).toEqual([503, 201]);
    expect(requests(h, 'GET', 'where')).toHaveLength(1);
  });

  it('fails a create with no natural key as outcome unknown; retry looks again; only --resend sends blindly', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    h.sim.controls.injectFaults({ kind: 'status', status: 504, after: true, count: 1, match: { method: 'POST' } });
    const w = await h.startWorker();
    const before = h.upstream('forms').length;
    const jobId = await h.queue.create(h.slug, 'forms', { title: 'Keyless form' });
    expect(await h.settled(jobId)).toBe('failed');
    expect((await w.queue.getJob(jobId))?.failedReason).toMatch(/outcome unknown/);
    expect(h.logRow(jobId)).toMatchObject({ status: 'failed', error_code: 'US_OUTCOME_UNKNOWN', attempts: 1 });
    expect(h.upstream('forms')).toHaveLength(before + 1);
    expect(requests(h, 'POST', '/forms')).toHaveLength(1);

    const shown = await retry(h, jobId);
    expect(await h.settled(jobId)).toBe('failed');
    expect(requests(h, 'POST', '/forms')).toHaveLength(1);
    const details = await showWrite(w.queue, null, jobId);
    expect(details.advice).toMatch(/may have been applied.*--resend/s);
    expect(shown.jobId).toBe(jobId);

    await retry(h, jobId, true);
    expect(await h.settled(jobId)).toBe('completed');
    expect(requests(h, 'POST', '/forms')).toHaveLength(2);
  });
});
