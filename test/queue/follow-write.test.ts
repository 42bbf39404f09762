import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WriteWaitTimeoutError } from '../../src/writes/write-state.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/sync-harness.js';
import { idOf, type WriteHarness, writeHarness } from '../writes/write-harness.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

const MISSING = 'ffffffffffffffffffffffff';

describe('getWrite and waitForWrite against the simulator', () => {
  it('say queued while no worker runs, and a wait runs out with US_TIMEOUT and the state it was in', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    const ei = idOf(h.upstream('event-instances')[0]);
    const jobId = await h.queue.updateEventInstance(h.slug, ei, { booking: { bookingLinkLabel: 'Queued' } });
    expect(await h.queue.getWrite(jobId)).toMatchObject({
      jobId,
      state: 'queued',
      done: false,
      op: 'update',
      collection: 'event-instances',
      recordId: ei,
      error: null,
    });
    const waited = h.queue.waitForWrite(jobId, { timeoutMs: 300 });
    await expect(waited).rejects.toBeInstanceOf(WriteWaitTimeoutError);
    await expect(waited).rejects.toMatchObject({ code: 'US_TIMEOUT', last: { jobId, state: 'queued' } });
  });

  it('resolve ok with the upstream id of a create, and failed with the code of a 404', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    await h.startWorker();
    const ei = idOf(h.upstream('event-instances')[0]);
    const ok = await h.queue.updateEventInstance(h.slug, ei, { booking: { bookingLinkLabel: 'Waited for' } });
    const created = await h.queue.createSeries(h.slug, { title: 'Waited', slug: 'waited', _status: 'published' });
    const failed = await h.queue.updateEventInstance(h.slug, MISSING, { booking: { bookingLinkLabel: 'Nowhere' } });

    expect(await h.queue.waitForWrite(ok)).toMatchObject({ state: 'ok', done: true, resultId: ei, error: null });
    const made = await h.queue.waitForWrite(created, { timeoutMs: 30_000 });
    const upstreamId = idOf(h.upstream('series').find((d) => d.slug === 'waited'));
    expect(made).toMatchObject({ state: 'ok', resultId: upstreamId, op: 'create', collection: 'series' });
    expect(await h.queue.waitForWrite(failed, { timeoutMs: 30_000 })).toMatchObject({
      state: 'failed',
      done: true,
      recordId: MISSING,
      // The record, never the route template: which tenant and which id were refused.
      error: {
        code: 'US_NOT_FOUND',
        status: 404,
        message: `PATCH /partners/2026-02/${h.slug}/event-instances/${MISSING} -> 404: Not Found`,
      },
    });
    expect(await h.queue.getWrite(ok)).toMatchObject({ state: 'ok', attempts: 1 });
  });

  it('refuse a job nobody knows with US_NOT_FOUND', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    await expect(h.queue.getWrite('no-such-job')).rejects.toMatchObject({ code: 'US_NOT_FOUND' });
    await expect(h.queue.waitForWrite('')).rejects.toMatchObject({ code: 'US_VALIDATION' });
  });
});

describe('understudy writes show and writes wait', () => {
  const cli = (h: WriteHarness, ...args: string[]) => {
    const file = join(tempDir(), 'config.json');
    writeFileSync(
      file,
      JSON.stringify({
        baseUrl: h.sim.url,
        database: h.dbPath,
        redis: { url: redis.url, prefix: h.prefix },
        tenants: [{ slug: h.slug, apiKeyEnv: 'FOLLOW_TEST_KEY' }],
      }),
    );
    return runCli(['writes', ...args, '--config', file], { env: { FOLLOW_TEST_KEY: h.tenant.apiKey, REDIS_URL: '' } });
  };

  it('exit 75 when the timeout runs out, 0 for a write applied, 1 for a write failed', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    const ei = idOf(h.upstream('event-instances')[0]);
    const ok = await h.queue.updateEventInstance(h.slug, ei, { booking: { bookingLinkLabel: 'From the CLI' } });
    const failed = await h.queue.updateEventInstance(h.slug, MISSING, { booking: { bookingLinkLabel: 'Nowhere' } });

    const early = await cli(h, 'wait', ok, '--timeout', '0.2');
    expect(early.code, early.stderr).toBe(75);
    expect(JSON.parse(early.stdout)).toMatchObject({ jobId: ok, state: 'queued' });
    expect(early.stderr).toBe(
      `understudy writes: write ${ok} is still queued after 0.2 s: no worker is listening on the writes queue ` +
        `under prefix "${h.prefix}"\n`,
    );

    await h.startWorker();
    const applied = await cli(h, 'wait', ok, '--timeout', '30');
    expect(applied.code).toBe(0);
    expect(JSON.parse(applied.stdout)).toMatchObject({ state: 'ok', resultId: ei });
    const refused = await cli(h, 'wait', failed);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({
      state: 'failed',
      error: {
        code: 'US_NOT_FOUND',
        message: `PATCH /partners/2026-02/${h.slug}/event-instances/${MISSING} -> 404: Not Found`,
      },
    });
    expect(refused.stdout).not.toContain(h.tenant.apiKey);

    const shown = await cli(h, 'show', ok);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      jobId: ok,
      state: 'ok',
      queueState: 'completed',
      log: { status: 'ok' },
    });
    expect((await cli(h, 'wait', ok, '--timeout', 'soon')).code).toBe(2);
    expect((await cli(h, 'show', 'no-such-job')).code).toBe(1);
  });
});
