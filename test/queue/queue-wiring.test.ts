import { randomUUID } from 'node:crypto';
import { type Job, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { type CollectionOutcome, syncCollectionProcessor } from '../../jobs/sync-collection.js';
import { syncTenantProcessor } from '../../jobs/sync-tenant.js';
import type { TenantConfig } from '../../src/config/config-schema.js';
import { UnderstudyError, UpstreamError } from '../../src/errors.js';
import { createLogger } from '../../src/log.js';
import { errorsFailTheCalls } from '../../src/queue/error-listeners.js';
import {
  addCollectionJob,
  collectionSyncPending,
  openSyncQueue,
  SYNC_QUEUE,
  type SyncQueue,
} from '../../src/queue/queues.js';
import { reconcileSchedules, schedulesFor } from '../../src/queue/schedules.js';
import { wallClock } from '../../src/sync/schedule-clock.js';
import { tenantSlug } from '../../src/vocabulary/ids.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

const log = createLogger({ level: 'silent' });
const tenant = tenantSlug('acme');

const connect = () => {
  const r = new Redis(server.url, { maxRetriesPerRequest: null });
  onTestFinished(() => {
    r.disconnect();
  });
  return r;
};

const queueFor = (prefix: string): SyncQueue => {
  const q = openSyncQueue(connect(), prefix, errorsFailTheCalls);
  onTestFinished(() => q.close());
  return q;
};

const worker = (prefix: string, processor: (job: Job, token?: string) => Promise<unknown>, concurrency = 1) => {
  const w = new Worker(SYNC_QUEUE, processor, { connection: connect(), prefix, concurrency, drainDelay: 1 });
  onTestFinished(() => w.close());
  return w;
};

const outcome = (over: Partial<CollectionOutcome> = {}): CollectionOutcome => ({
  name: 'series',
  fetched: 0,
  inserted: 0,
  updated: 0,
  unchanged: 0,
  deleted: 0,
  future: 0,
  undated: 0,
  requests: 1,
  rateLimited: 0,
  ms: 1,
  ...over,
});

const tenantConfig = (over: Partial<TenantConfig> = {}): TenantConfig => ({
  slug: 'acme',
  apiKeyEnv: 'ACME_KEY',
  drafts: false,
  ...over,
});

describe('sync queue', () => {
  it('drops a duplicate while one waits, and a full sync supersedes a waiting incremental', async () => {
    const queue = queueFor(`t-${randomUUID()}`);
    const a = await addCollectionJob(queue, { tenant, collection: 'series', mode: 'incremental' });
    const b = await addCollectionJob(queue, { tenant, collection: 'series', mode: 'incremental' });
    expect(b).toBe(a);
    const full = await addCollectionJob(queue, { tenant, collection: 'series', mode: 'full' });
    expect(full).not.toBe(a);
    expect(await queue.getJob(a)).toBeUndefined();
    // An incremental asked for while the full waits joins the full.
    expect(await addCollectionJob(queue, { tenant, collection: 'series', mode: 'incremental' })).toBe(full);
    expect(await queue.getJobCounts('waiting')).toMatchObject({ waiting: 1 });
    const other = await addCollectionJob(queue, { tenant, collection: 'events', mode: 'incremental' });
    expect(other).not.toBe(full);
  });

  it('never syncs one collection twice at once, across workers', async () => {
    const prefix = `t-${randomUUID()}`;
    const queue = queueFor(prefix);
    const stopping = new AbortController().signal;
    let running = 0;
    let maxRunning = 0;
    let started = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const runCollection = async () => {
      started++;
      running++;
      maxRunning = Math.max(maxRunning, running);
      await gate;
      running--;
      return outcome();
    };
    const deps = { runCollection, redis: connect(), prefix, lockTtlMs: 2000, clock: wallClock, stopping, log };
    worker(prefix, syncCollectionProcessor(deps), 2);
    worker(prefix, syncCollectionProcessor({ ...deps, redis: connect() }), 2);
    await addCollectionJob(queue, { tenant, collection: 'series', mode: 'incremental' });
    await vi.waitFor(() => expect(started).toBe(1));
    // The full sync of the same collection finds the lock held and is delayed, not failed.
    const full = await addCollectionJob(queue, { tenant, collection: 'series', mode: 'full' });
    await vi.waitFor(async () => expect(await (await queue.getJob(full))?.getState()).toBe('delayed'));
    expect(running).toBe(1);
    release();
    await vi.waitFor(async () => expect(await queue.getJobCounts('completed')).toMatchObject({ completed: 2 }), {
      timeout: 15_000,
    });
    expect(maxRunning).toBe(1);
    expect(await queue.getJobCounts('failed')).toMatchObject({ failed: 0 });
  });

  it('delays a collection reached by reference until the collections that reference it have synced', async () => {
    const prefix = `t-${randomUUID()}`;
    const queue = queueFor(prefix);
    const stopping = new AbortController().signal;
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const runCollection = async (data: { collection: string }) => {
      order.push(data.collection);
      if (data.collection === 'events') await gate;
      return outcome({ name: data.collection as CollectionOutcome['name'] });
    };
    // Venues read the ids that mirrored events point at: they wait while an events sync is pending.
    const prerequisitesPending = async (data: { tenant: string; collection: string }) =>
      data.collection === 'venues' && (await collectionSyncPending(queue, data.tenant, 'events'));
    const deps = {
      runCollection,
      prerequisitesPending,
      redis: connect(),
      prefix,
      lockTtlMs: 2000,
      clock: wallClock,
      stopping,
      log,
    };
    worker(prefix, syncCollectionProcessor(deps), 2);
    await addCollectionJob(queue, { tenant, collection: 'events', mode: 'full' });
    await vi.waitFor(() => expect(order).toEqual(['events']));
    const venues = await addCollectionJob(queue, { tenant, collection: 'venues', mode: 'full' });
    await vi.waitFor(async () => expect(await (await queue.getJob(venues))?.getState()).toBe('delayed'));
    expect(order).toEqual(['events']);
    release();
    await vi.waitFor(async () => expect(await queue.getJobCounts('completed')).toMatchObject({ completed: 2 }), {
      timeout: 15_000,
    });
    expect(order).toEqual(['events', 'venues']);
  });

  it('fails a job at once when the key is refused, and retries transient failures', async () => {
    const prefix = `t-${randomUUID()}`;
    const queue = queueFor(prefix);
    let calls = 0;
    const runCollection = async (data: { collection: string }, _opts: unknown) => {
      if (data.collection === 'series') throw new UnderstudyError('US_AUTH', 'GET /series -> 401');
      calls++;
      if (calls < 3) throw new UnderstudyError('US_UPSTREAM_UNAVAILABLE', 'GET /events -> 503');
      return outcome({ name: 'events' });
    };
    const retry = { attempts: 5, backoffMs: 10 };
    worker(
      prefix,
      syncCollectionProcessor({
        runCollection,
        redis: connect(),
        prefix,
        lockTtlMs: 2000,
        clock: wallClock,
        stopping: new AbortController().signal,
        log,
      }),
    );
    const refused = await addCollectionJob(queue, { tenant, collection: 'series', mode: 'incremental' }, retry);
    await vi.waitFor(async () => expect(await (await queue.getJob(refused))?.getState()).toBe('failed'));
    const failed = await queue.getJob(refused);
    expect(failed?.attemptsMade).toBe(1);
    expect(failed?.failedReason).toMatch(/key refused: GET \/series -> 401/);
    const flaky = await addCollectionJob(queue, { tenant, collection: 'events', mode: 'incremental' }, retry);
    await vi.waitFor(async () => expect(await (await queue.getJob(flaky))?.getState()).toBe('completed'));
    expect((await queue.getJob(flaky))?.attemptsMade).toBe(3);
  });

  it('fans a tenant job out into one job per collection, with no key in job data', async () => {
    const prefix = `t-${randomUUID()}`;
    const queue = queueFor(prefix);
    const fanOut = syncTenantProcessor({
      queue,
      collectionsOf: (t) => (t === 'acme' ? ['series', 'events'] : null),
      log,
    });
    const { jobs } = await fanOut({ id: '1', data: { tenant, mode: 'full' } } as Job);
    expect(jobs.map((j) => j.collection)).toEqual(['series', 'events']);
    const data = await Promise.all(jobs.map(async (j) => (await queue.getJob(j.jobId))?.data));
    expect(data).toEqual([
      { tenant: 'acme', collection: 'series', mode: 'full' },
      { tenant: 'acme', collection: 'events', mode: 'full' },
    ]);
    // Fanning out again while those wait joins them.
    expect((await fanOut({ id: '2', data: { tenant, mode: 'full' } } as Job)).jobs).toEqual(jobs);
    await expect(fanOut({ id: '3', data: { tenant: 'gone', mode: 'full' } } as Job)).rejects.toThrow(
      /not in the config/,
    );
  });

  it('fails a tenant job at once when route discovery meets a refused key', async () => {
    const queue = queueFor(`t-${randomUUID()}`);
    const fanOut = syncTenantProcessor({
      queue,
      collectionsOf: () => {
        throw new UpstreamError('GET', '/partners/{version}/{tenant}/series', 401, 'Valid API key required');
      },
      log,
    });
    const err = await fanOut({ id: '1', data: { tenant, mode: 'full' } } as Job).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnrecoverableError);
    expect(String(err)).toMatch(/key refused: .*401/);
  });

  it('fires each schedule tick exactly once with three workers running', async () => {
    const prefix = `t-${randomUUID()}`;
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) {
      const q = queueFor(prefix);
      // Every worker reconciles at start, as `understudy worker` does.
      await reconcileSchedules(
        q,
        [{ id: 'incremental.acme', repeat: { every: 200 }, data: { tenant, mode: 'incremental' } }],
        log,
      );
      worker(prefix, async (job) => {
        if (job.name === 'sync-tenant') seen.push(job.id!);
      });
    }
    await vi.waitFor(() => expect(seen.length).toBeGreaterThanOrEqual(6), { timeout: 20_000 });
    expect(new Set(seen).size).toBe(seen.length);
    const ticks = seen.map((id) => Number(id.split(':').pop())).sort((x, y) => x - y);
    for (let i = 1; i < ticks.length; i++) expect(ticks[i]! - ticks[i - 1]!).toBeGreaterThanOrEqual(200);
  });

  it('removes schedules that are no longer in the config when a worker starts', async () => {
    const queue = queueFor(`t-${randomUUID()}`);
    const both = schedulesFor([
      tenantConfig({ schedule: { incrementalEveryMinutes: 15, fullCron: '0 3 * * *', timezone: 'Europe/Paris' } }),
      tenantConfig({ slug: 'globex', schedule: { incrementalEveryMinutes: 5, fullCron: null, timezone: 'UTC' } }),
      tenantConfig({ slug: 'initech' }),
    ]);
    expect(both.map((s) => s.id)).toEqual(['incremental.acme', 'full.acme', 'incremental.globex']);
    await reconcileSchedules(queue, both, log);
    const { removed } = await reconcileSchedules(queue, both.slice(0, 2), log);
    expect(removed).toEqual(['incremental.globex']);
    const left = await queue.getJobSchedulers(0, -1);
    expect(left.map((s) => s.key).sort()).toEqual(['full.acme', 'incremental.acme']);
    expect(left.find((s) => s.key === 'full.acme')).toMatchObject({ pattern: '0 3 * * *', tz: 'Europe/Paris' });
  });
});
