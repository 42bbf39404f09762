import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listFailedWrites, retryWrite, showWrite } from '../../src/queue/failed-writes.js';
import { createRecordOrder } from '../../src/queue/redis-record-order.js';
import { isPendingJob } from '../../src/queue/write-queue.js';
import { openWriteLog } from '../../src/store/open-mirror.js';
import type { JsonObject } from '../../src/vocabulary/ids.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/sync-harness.js';
import { idOf, type WriteHarness, writeHarness } from './write-harness.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

const tools = async (h: WriteHarness) => {
  const w = h.bull();
  const { Redis } = await import('ioredis');
  const conn = new Redis(redis.url, { maxRetriesPerRequest: null });
  const writeLog = await openWriteLog(h.dbPath);
  const order = createRecordOrder({ redis: conn, prefix: h.prefix, isPending: (id) => isPendingJob(w, id) });
  return {
    order,
    writeLog,
    close: async () => {
      await writeLog.close();
      await conn.quit();
    },
  };
};

describe('partial bulk results', () => {
  it('completes a bulk write with per-record failures as partial, recording each failed id and its error', async () => {
    const h = await writeHarness({ redisUrl: redis.url, mirror: ['organizations'] });
    await h.startWorker();
    const org = idOf(h.upstream('organizations')[0]);
    const jobId = await h.queue.bulk(h.slug, 'organizations', { ids: [org, 'gone-1'], set: { partner: true } });
    expect(await h.settled(jobId)).toBe('completed');
    const job = await h.bull().getJob(jobId);
    expect(job?.returnvalue).toMatchObject({ status: 'partial', failures: [{ id: 'gone-1', status: 404 }] });
    const row = h.logRow(jobId) as Record<string, unknown>;
    expect(row).toMatchObject({ status: 'partial', op: 'bulk' });
    expect(JSON.parse(String(row.failures))).toEqual([{ id: 'gone-1', status: 404, message: 'Not Found' }]);
    // The records that did change are mirrored by the incremental sync the bulk write triggered.
    const attrs = h.mirrorDoc('organizations', org)?.attributes as JsonObject[];
    expect(attrs.find((a) => a.key === 'partner')?.value).toBe(true);
    const t = await tools(h);
    try {
      const failed = await listFailedWrites(h.bull(), t.writeLog);
      expect(failed).toEqual([
        expect.objectContaining({ jobId, status: 'partial', failures: [expect.objectContaining({ id: 'gone-1' })] }),
      ]);
    } finally {
      await t.close();
    }
  });
});

describe('replaying failed writes', () => {
  it('requeues a failed write with fresh attempts, and it then applies', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    const id = idOf(h.upstream('event-instances')[0]);
    h.sim.controls.injectFaults({ kind: 'status', status: 409, count: 1, match: { method: 'PATCH' } });
    await h.startWorker();
    const jobId = await h.queue.update(h.slug, 'event-instances', id, { booking: { bookingLinkLabel: 'Replayed' } });
    expect(await h.settled(jobId)).toBe('failed');
    const t = await tools(h);
    try {
      const failed = await listFailedWrites(h.bull(), t.writeLog);
      expect(failed).toEqual([
        expect.objectContaining({
          jobId,
          status: 'failed',
          op: 'update',
          recordId: id,
          reason: expect.stringContaining('409'),
        }),
      ]);
      expect(await showWrite(h.bull(), t.writeLog, jobId)).toMatchObject({
        state: 'failed',
        data: { op: 'update', collection: 'event-instances', id },
        log: { status: 'failed', attempts: 1, upstreamStatus: 409 },
      });
      expect(await retryWrite(h.bull(), t.order, t.writeLog, jobId)).toEqual({ jobId, how: 'requeued', runs: jobId });
      expect(await h.settled(jobId)).toBe('completed');
      const booking = h.upstream('event-instances').find((d) => idOf(d) === id)?.booking as JsonObject;
      expect(booking.bookingLinkLabel).toBe('Replayed');
      expect(h.logRow(jobId)).toMatchObject({ status: 'ok', attempts: 1 });
      await expect(retryWrite(h.bull(), t.order, t.writeLog, jobId)).rejects.toThrow(/is completed, not failed/);
    } finally {
      await t.close();
    }
  });

  it('replays a partial bulk write for the records that failed', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    await h.startWorker();
    const [a] = h.upstream('series').map(idOf);
    const jobId = await h.queue.bulk(h.slug, 'series', { ids: [a as string, 'gone-2'], set: { sponsor: 'ACME' } });
    expect(await h.settled(jobId)).toBe('completed');
    const t = await tools(h);
    try {
      const replay = await retryWrite(h.bull(), t.order, t.writeLog, jobId);
      expect(replay.how).toBe('replayed');
      expect(replay.runs).not.toBe(jobId);
      expect(await h.settled(replay.runs)).toBe('completed');
      expect((await h.bull().getJob(replay.runs))?.data).toMatchObject({
        op: 'bulk',
        collection: 'series',
        body: { ids: ['gone-2'], set: { sponsor: 'ACME' } },
      });
      // The original is settled by its replay; the replay (gone-2 is still gone) is what is listed now.
      const listed = (await listFailedWrites(h.bull(), t.writeLog)).map((f) => f.jobId);
      expect(listed).toContain(replay.runs);
      expect(listed).not.toContain(jobId);
    } finally {
      await t.close();
    }
  });
});

describe('understudy enqueue and understudy writes', () => {
  const configFor = (h: WriteHarness) => {
    const file = join(tempDir(), 'config.json');
    writeFileSync(
      file,
      JSON.stringify({
        baseUrl: h.sim.url,
        database: h.dbPath,
        redis: { url: redis.url, prefix: h.prefix },
        tenants: [{ slug: h.slug, apiKeyEnv: 'WRITES_TEST_KEY' }],
      }),
    );
    return file;
  };
  const env = (h: WriteHarness) => ({ WRITES_TEST_KEY: h.tenant.apiKey, REDIS_URL: '' });

  it('queues a write from flags or stdin, prints the job id last, and refuses a forbidden body with exit 2', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    const cfg = configFor(h);
    const id = idOf(h.upstream('event-instances')[0]);
    const base = ['enqueue', '--config', cfg, '--tenant', h.slug];
    const ok = await runCli(
      [...base, '--op', 'patch', '--collection', 'event-instances', '--id', id, '--idempotency-key', 'k1'],
      { env: env(h), input: '{"booking":{"bookingLinkLabel":"From the CLI"}}' },
    );
    // No worker runs yet: the write is queued, with one line saying it waits for one.
    expect(ok.stderr).toBe(
      `understudy enqueue: warning: no worker is listening on the writes queue under prefix "${h.prefix}": writes ` +
        `wait until a worker with redis.prefix "${h.prefix}" runs (a worker with another prefix drains another queue)\n`,
    );
    expect(ok.code).toBe(0);
    const jobId = ok.stdout.trim().split('\n').at(-1) as string;
    const again = await runCli(
      [
        ...base,
        '--op',
        'update',
        '--collection',
        'event-instances',
        '--id',
        id,
        '--idempotency-key',
        'k1',
        '--json',
        '--body',
        '{"booking":{"bookingLinkLabel":"Another body, same key"}}',
      ],
      { env: env(h) },
    );
    expect(JSON.parse(again.stdout)).toMatchObject({ jobId });

    const bad = await runCli(
      [...base, '--op', 'create', '--collection', 'series', '--body', '{"title":"x","blocks":[]}'],
      {
        env: env(h),
      },
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/field "blocks" cannot be set/);

    await h.startWorker();
    expect(await h.settled(jobId)).toBe('completed');
    expect(await h.bull().getJobCounts()).toMatchObject({ completed: 1, waiting: 0, failed: 0 });
  });

  it('lists, shows and retries failed writes: retry --all leaves permanent failures unless --include-permanent', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    const cfg = configFor(h);
    h.sim.controls.injectFaults({ kind: 'status', status: 422, count: 1, match: { method: 'PUT' } });
    h.sim.controls.injectFaults({ kind: 'status', status: 503, count: 1, match: { method: 'PATCH' } });
    await h.startWorker({ attempts: 1 });
    const jobId = await h.queue.update(h.slug, 'redirects', idOf(h.upstream('redirects')[0]), { from: '/again' });
    const ei = idOf(h.upstream('event-instances')[0]);
    const flaky = await h.queue.updateEventInstance(h.slug, ei, { booking: { bookingLinkLabel: 'After a 503' } });
    expect(await h.settled(jobId)).toBe('failed');
    expect(await h.settled(flaky)).toBe('failed');

    const listed = await runCli(['writes', 'failed', '--config', cfg, '--json'], { env: env(h) });
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          jobId,
          op: 'update',
          collection: 'redirects',
          reason: expect.stringContaining('422'),
          code: 'US_UPSTREAM',
          retryable: false,
        }),
        expect.objectContaining({ jobId: flaky, code: 'US_UPSTREAM_UNAVAILABLE', retryable: true }),
      ]),
    );
    const table = await runCli(['writes', 'failed', '--config', cfg], { env: env(h) });
    expect(table.stdout).toContain(jobId);
    const shown = await runCli(['writes', 'show', jobId, '--config', cfg], { env: env(h) });
    expect(JSON.parse(shown.stdout)).toMatchObject({
      jobId,
      state: 'failed',
      queueState: 'failed',
      error: { code: 'US_UPSTREAM', status: 422 },
      log: { status: 'failed' },
    });

    const retried = await runCli(['writes', 'retry', '--all', '--config', cfg], { env: env(h) });
    expect(retried.code).toBe(0);
    expect(retried.stdout).toContain(`${flaky} requeued`);
    expect(retried.stdout).toContain(`${jobId} left: permanent failure (US_UPSTREAM: `);
    expect(retried.stdout).toContain('requeued 1, left 1 permanent failure(s)');
    expect(await h.settled(flaky)).toBe('completed');
    expect(await h.bull().getJobState(jobId)).toBe('failed');

    const forced = await runCli(['writes', 'retry', '--all', '--include-permanent', '--config', cfg], { env: env(h) });
    expect(forced.stdout).toContain(`${jobId} requeued`);
    expect(await h.settled(jobId)).toBe('completed');
    expect(h.upstream('redirects').some((d) => d.from === '/again')).toBe(true);
    const none = await runCli(['writes', 'failed', '--config', cfg], { env: env(h) });
    expect(none.stdout).toContain('no failed writes');
  });
});
