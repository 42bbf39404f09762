import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { errorsFailTheCalls } from '../../src/queue/error-listeners.js';
import { openWritesQueue } from '../../src/queue/write-queue.js';
import type { JsonObject } from '../../src/vocabulary/ids.js';
import { jobIdFor } from '../../src/writes/write-job.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { idOf, type WriteHarness, writeHarness } from './write-harness.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

const firstInstance = (h: WriteHarness) => idOf(h.upstream('event-instances')[0]);
const statuses = (h: WriteHarness, method: string, path: string) =>
  h.sim.controls
    .requestLog()
    .filter((e) => e.method === method && e.path.includes(path))
    .map((e) => e.status);
const label = (h: WriteHarness, id: string) =>
  (h.upstream('event-instances').find((d) => idOf(d) === id)?.booking as JsonObject | undefined)?.bookingLinkLabel;

describe('retry classes', () => {
  it.each([408, 425, 500, 503])('retries a %i with backoff, then applies the write', async (status) => {
    const h = await writeHarness({ redisUrl: redis.url });
    const id = firstInstance(h);
    h.sim.controls.injectFaults({
      kind: 'status',
      status,
      count: 1,
      match: { method: 'PATCH', path: '/event-instances/' },
    });
    await h.startWorker();
    const jobId = await h.queue.update(h.slug, 'event-instances', id, { booking: { bookingLinkLabel: 'Retried' } });
    expect(await h.settled(jobId)).toBe('completed');
    expect(statuses(h, 'PATCH', '/event-instances/')).toEqual([status, 200]);
    expect(label(h, id)).toBe('Retried');
    expect(h.logRow(jobId)).toMatchObject({ status: 'ok', attempts: 2 });
  });

  it('retries a dropped connection', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    const id = firstInstance(h);
    h.sim.controls.injectFaults({ kind: 'reset', count: 1, match: { method: 'PATCH' } });
    await h.startWorker();
    const jobId = await h.queue.update(h.slug, 'event-instances', id, { booking: { bookingLinkLabel: 'After reset' } });
    expect(await h.settled(jobId)).toBe('completed');
    expect(label(h, id)).toBe('After reset');
    expect(h.logRow(jobId)).toMatchObject({ status: 'ok', attempts: 2 });
  });

  it('gives up after writes.attempts and records the last error', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    h.sim.controls.injectFaults({ kind: 'status', status: 503, count: 10, match: { method: 'PATCH' } });
    const w = await h.startWorker({ attempts: 3 });
    const jobId = await h.queue.update(h.slug, 'event-instances', firstInstance(h), { ticketingSystemId: 'x' });
    expect(await h.settled(jobId)).toBe('failed');
    expect(statuses(h, 'PATCH', '/event-instances/')).toEqual([503, 503, 503]);
    expect((await w.queue.getJob(jobId))?.failedReason).toMatch(/gave up after 3 attempt\(s\).*503/);
    expect(h.logRow(jobId)).toMatchObject({ status: 'failed', attempts: 3, upstream_status: 503 });
  });

  it.each([400, 401, 403, 409, 422])('fails at once on a %i with the upstream message', async (status) => {
    const h = await writeHarness({ redisUrl: redis.url });
    h.sim.controls.injectFaults({ kind: 'status', status, count: 1, match: { method: 'PATCH' } });
    const w = await h.startWorker();
    const jobId = await h.queue.update(h.slug, 'event-instances', firstInstance(h), { ticketingSystemId: 'x' });
    expect(await h.settled(jobId)).toBe('failed');
    expect(statuses(h, 'PATCH', '/event-instances/')).toEqual([status]);
    expect((await w.queue.getJob(jobId))?.failedReason).toContain(`Injected ${status}`);
    expect(h.logRow(jobId)).toMatchObject({ status: 'failed', attempts: 1, upstream_status: status });
  });

  it('fails at once on a 404 from the upstream, with its message', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    const w = await h.startWorker();
    const jobId = await h.queue.update(h.slug, 'organizations', 'no-such-org', { name: 'x' });
    expect(await h.settled(jobId)).toBe('failed');
    expect((await w.queue.getJob(jobId))?.failedReason).toMatch(/-> 404/);
    expect(h.logRow(jobId)).toMatchObject({ status: 'failed', attempts: 1, upstream_status: 404 });
  });

  it('waits out 429s without spending an attempt', async () => {
    // The client waits out 3 of them itself; the 4th comes back to the job, which is delayed, not retried.
    const h = await writeHarness({ redisUrl: redis.url });
    h.sim.controls.injectFaults({ kind: 'rate-limit', retryAfterSeconds: 0, count: 4, match: { method: 'PATCH' } });
    await h.startWorker({ attempts: 1 });
    const id = firstInstance(h);
    const jobId = await h.queue.update(h.slug, 'event-instances', id, { booking: { bookingLinkLabel: 'Patient' } });
    expect(await h.settled(jobId)).toBe('completed');
    expect(statuses(h, 'PATCH', '/event-instances/')).toEqual([429, 429, 429, 429, 200]);
    expect(label(h, id)).toBe('Patient');
    expect(h.logRow(jobId)).toMatchObject({ status: 'ok', attempts: 1 });
  });
});

describe('order per record', () => {
  it('applies writes to one record in enqueue order while the first is retrying', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    const id = firstInstance(h);
    h.sim.controls.injectFaults({ kind: 'status', status: 503, count: 2, match: { method: 'PATCH' } });
    await h.startWorker({ backoffMs: 40, concurrency: 4 });
    const jobs: string[] = [];
    for (const l of ['A', 'B', 'C']) {
      jobs.push(await h.queue.update(h.slug, 'event-instances', id, { booking: { bookingLinkLabel: l } }));
    }
    for (const j of jobs) expect(await h.settled(j)).toBe('completed');
    expect(label(h, id)).toBe('C');
    const [a, b, c] = jobs.map((j) => h.logRow(j) as { started_at: string; finished_at: string; attempts: number });
    expect(a?.attempts).toBe(3);
    expect(b?.attempts).toBe(1);
    expect(String(b?.started_at) >= String(a?.finished_at)).toBe(true);
    expect(String(c?.started_at) >= String(b?.finished_at)).toBe(true);
    expect(statuses(h, 'PATCH', '/event-instances/')).toEqual([503, 503, 200, 200, 200]);
  });

  it('lets later writes run once an earlier one has failed for good', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    const id = firstInstance(h);
    h.sim.controls.injectFaults({ kind: 'status', status: 422, count: 1, match: { method: 'PATCH' } });
    await h.startWorker();
    const a = await h.queue.update(h.slug, 'event-instances', id, { booking: { bookingLinkLabel: 'A' } });
    const b = await h.queue.update(h.slug, 'event-instances', id, { booking: { bookingLinkLabel: 'B' } });
    expect(await h.settled(a)).toBe('failed');
    expect(await h.settled(b)).toBe('completed');
    expect(label(h, id)).toBe('B');
  });

  it('does not hold up writes to other records', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    const [one, two] = h.upstream('event-instances').map(idOf);
    h.sim.controls.injectFaults({ kind: 'status', status: 503, count: 2, match: { method: 'PATCH', path: `/${one}` } });
    await h.startWorker({ backoffMs: 200 });
    const a = await h.queue.update(h.slug, 'event-instances', one as string, { ticketingSystemId: 'one' });
    const b = await h.queue.update(h.slug, 'event-instances', two as string, { ticketingSystemId: 'two' });
    expect(await h.settled(b)).toBe('completed');
    expect(await h.settled(a)).toBe('completed');
    expect(String(h.logRow(b)?.finished_at) < String(h.logRow(a)?.finished_at)).toBe(true);
  });
});

describe('idempotency keys', () => {
  it('gives the same job for the same key, and queues the write once', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    const body = { title: 'Once only', slug: 'once-only', _status: 'published' } as const;
    const first = await h.queue.create(h.slug, 'series', body, { idempotencyKey: 'order-42' });
    const again = await h.queue.create(h.slug, 'series', body, { idempotencyKey: 'order-42' });
    const other = await h.queue.create(h.slug, 'series', { ...body, slug: 'twice' }, { idempotencyKey: 'order-43' });
    expect(again).toBe(first);
    expect(first).toBe(jobIdFor(h.slug, 'order-42'));
    expect(other).not.toBe(first);
    const w = await h.startWorker();
    expect(await h.settled(first)).toBe('completed');
    expect(await h.settled(other)).toBe('completed');
    // After completion the key still names the same job.
    expect(await h.queue.create(h.slug, 'series', body, { idempotencyKey: 'order-42' })).toBe(first);
    expect(await w.queue.getJobCounts()).toMatchObject({ completed: 2, waiting: 0 });
    expect(h.upstream('series').filter((d) => d.slug === 'once-only')).toHaveLength(1);
    expect(h.logRow(first)).toMatchObject({ idempotency_key: 'order-42', status: 'ok' });
  });
});

describe('unknown outcomes', () => {
  it('finds a create that was applied but not answered by its slug, and does not send it again', async () => {
    const h = await writeHarness({ redisUrl: redis.url, proxy: true });
    h.proxy?.dropAfterApplying({ method: 'POST', path: '/series', count: 1 });
    await h.startWorker();
    const jobId = await h.queue.create(h.slug, 'series', {
      title: 'Lost answer',
      slug: 'lost-answer',
      _status: 'published',
    });
    expect(await h.settled(jobId)).toBe('completed');
    expect(h.proxy?.dropped()).toBe(1);
    const made = h.upstream('series').filter((d) => d.slug === 'lost-answer');
    expect(made).toHaveLength(1);
    expect(h.sim.controls.requestLog().filter((e) => e.method === 'POST')).toHaveLength(1);
    expect(h.sim.controls.requestLog().filter((e) => e.method === 'GET' && e.path.includes('where'))).toHaveLength(1);
    expect(h.logRow(jobId)).toMatchObject({
      status: 'ok',
      attempts: 2,
      note: 'found after unknown outcome',
      result_id: idOf(made[0]),
    });
    expect(h.mirrorDoc('series', idOf(made[0]))?.slug).toBe('lost-answer');
  });

  it('finds media by filename', async () => {
    const h = await writeHarness({ redisUrl: redis.url, proxy: true });
    h.proxy?.dropAfterApplying({ method: 'POST', path: '/media', count: 1 });
    await h.startWorker();
    const jobId = await h.queue.create(h.slug, 'media', { filename: 'lost.jpg', alt: 'Lost' });
    expect(await h.settled(jobId)).toBe('completed');
    expect(h.sim.controls.requestLog().filter((e) => e.method === 'POST')).toHaveLength(1);
    expect(h.logRow(jobId)).toMatchObject({ status: 'ok', note: 'found after unknown outcome', result_id: 'lost.jpg' });
  });

  it('sends a create again when the lookup shows it was not applied', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    // A reset before the simulator reads the request: nothing was created, but the client cannot know that.
    h.sim.controls.injectFaults({ kind: 'reset', count: 1, match: { method: 'POST' } });
    await h.startWorker();
    const jobId = await h.queue.create(h.slug, 'series', {
      title: 'Second go',
      slug: 'second-go',
      _status: 'published',
    });
    expect(await h.settled(jobId)).toBe('completed');
    expect(h.upstream('series').filter((d) => d.slug === 'second-go')).toHaveLength(1);
    expect(h.sim.controls.requestLog().filter((e) => e.method === 'POST')).toHaveLength(2);
    expect(h.logRow(jobId)).toMatchObject({ status: 'ok', attempts: 2, note: null });
  });

  it('counts a delete answered 404 after an unknown outcome as done', async () => {
    const h = await writeHarness({ redisUrl: redis.url, proxy: true, mirror: ['event-instances'] });
    const id = firstInstance(h);
    h.proxy?.dropAfterApplying({ method: 'DELETE', path: '/event-instances/', count: 1 });
    await h.startWorker();
    const jobId = await h.queue.delete(h.slug, 'event-instances', id);
    expect(await h.settled(jobId)).toBe('completed');
    expect(statuses(h, 'DELETE', '/event-instances/')).toEqual([200, 404]);
    expect(h.logRow(jobId)).toMatchObject({ status: 'ok', attempts: 2, note: 'already gone after unknown outcome' });
    expect(h.mirrorDoc('event-instances', id)?.__deletedAt).toBeTruthy();
  });

  it('treats a write a dead worker was sending as an unknown outcome: looks before sending a create again', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    const made = await h.queue.create(h.slug, 'series', {
      title: 'Half sent',
      slug: 'half-sent',
      _status: 'published',
    });
    const fresh = await h.queue.create(h.slug, 'series', {
      title: 'Never sent',
      slug: 'never-sent',
      _status: 'published',
    });
    // As a worker killed mid-request leaves them: progress says an attempt was being sent.
    const conn = new Redis(redis.url, { maxRetriesPerRequest: null });
    const queue = openWritesQueue(conn, h.prefix, errorsFailTheCalls);
    try {
      for (const j of [made, fresh]) await (await queue.getJob(j))?.updateProgress({ attempts: 1, sending: true });
    } finally {
      await queue.close();
      await conn.quit();
    }
    await h.client.create(
      'series',
      { title: 'Half sent', slug: 'half-sent', _status: 'published' },
      {},
      { signal: AbortSignal.timeout(5000) },
    );
    h.sim.controls.reset();
    await h.startWorker({ concurrency: 1 });
    expect(await h.settled(made)).toBe('completed');
    expect(await h.settled(fresh)).toBe('completed');
    expect(h.upstream('series').filter((d) => d.slug === 'half-sent')).toHaveLength(1);
    expect(h.upstream('series').filter((d) => d.slug === 'never-sent')).toHaveLength(1);
    const log = h.sim.controls.requestLog().map((e) => `${e.method} ${e.path.includes('where') ? 'lookup' : 'write'}`);
    expect(log).toEqual(['GET lookup', 'GET lookup', 'POST write']);
    expect(h.logRow(made)).toMatchObject({ status: 'ok', attempts: 2, note: 'found after unknown outcome' });
    expect(h.logRow(fresh)).toMatchObject({ status: 'ok', attempts: 2, note: null });
  });

  it('fails a create with no natural key to look it up by rather than send it blindly', async () => {
    const h = await writeHarness({ redisUrl: redis.url, proxy: true });
    h.proxy?.dropAfterApplying({ method: 'POST', path: '/forms', count: 1 });
    const w = await h.startWorker();
    const before = h.upstream('forms').length;
    const jobId = await h.queue.create(h.slug, 'forms', { title: 'No slug form' });
    expect(await h.settled(jobId)).toBe('failed');
    expect((await w.queue.getJob(jobId))?.failedReason).toMatch(
      /outcome unknown: .*no slug to look the record up by, so it is not sent again on its own/,
    );
    expect(h.upstream('forms')).toHaveLength(before + 1);
    expect(h.sim.controls.requestLog().filter((e) => e.method === 'POST')).toHaveLength(1);
  });
});

describe('fairness between tenants', () => {
  it("does not let one tenant's exhausted budget hold every worker slot", async () => {
    const h = await writeHarness({
      redisUrl: redis.url,
      sim: { tenants: 2 },
      // The first tenant may write once a minute; the second has no limit.
      budgets: [{ reads: 1_000_000, writes: 1, windowMs: 60_000 }],
    });
    const [busy, other] = h.tenants;
    if (!busy || !other) throw new Error('two tenants expected');
    const busyIds = h.sim.controls.docs(busy.slug, 'event-instances').map(idOf).slice(0, 4);
    const otherId = idOf(h.sim.controls.docs(other.slug, 'event-instances')[0]);
    const busyJobs: string[] = [];
    for (const id of busyIds)
      busyJobs.push(await h.queue.update(busy.slug, 'event-instances', id, { ticketingSystemId: 'b' }));
    const otherJob = await h.queue.update(other.slug, 'event-instances', otherId, { ticketingSystemId: 'o' });
    await h.startWorker({ concurrency: 2, parking: { afterMs: 30, retryInMs: 50 } });
    expect(await h.settled(otherJob)).toBe('completed');
    const states = await Promise.all(busyJobs.map((j) => h.bull().getJobState(j)));
    expect(states.filter((s) => s === 'completed')).toHaveLength(1);
    // Parked writes go back to the queue without spending an attempt (they flip between waiting and parked).
    await vi.waitFor(
      () => {
        const parked = busyJobs.map((j) => h.logRow(j)).filter((r) => r?.status === 'delayed');
        expect(parked.length).toBeGreaterThan(0);
        expect(String(parked[0]?.note)).toMatch(/waiting for the key's write budget/);
        expect(parked[0]?.attempts).toBe(0);
      },
      { timeout: 10_000, interval: 20 },
    );
  });
});
