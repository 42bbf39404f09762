import { randomUUID } from 'node:crypto';
import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { type CollectionProcessorDeps, syncCollectionProcessor } from '../../jobs/sync-collection.js';
import { UnderstudyError } from '../../src/errors.js';
import { GateParkedError } from '../../src/partners/gate-parking.js';
import { collectionLockKey } from '../../src/queue/collection-lock.js';
import type { CollectionOutcome } from '../../src/sync/run-collection-job.js';
import { wallClock } from '../../src/sync/schedule-clock.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { silentLog } from '../helpers/sync-harness.js';

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

const data = { tenant: 'acme', collection: 'series', mode: 'incremental' };
const outcome: CollectionOutcome = {
  name: 'series',
  fetched: 2,
  inserted: 1,
  updated: 1,
  unchanged: 0,
  deleted: 0,
  future: 0,
  undated: 0,
  requests: 1,
  rateLimited: 0,
  ms: 5,
};

/** A BullMQ job as far as the processor touches it. */
const fakeJob = (d: unknown = data) => ({
  id: 'c-1',
  data: d,
  attemptsMade: 0,
  moveToDelayed: vi.fn(async (_at: number, _token?: string) => {}),
});

function setup(o: Partial<CollectionProcessorDeps> = {}) {
  const redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
  onTestFinished(() => redis.quit().then(() => undefined));
  const prefix = `t-${randomUUID().slice(0, 8)}`;
  const deps: CollectionProcessorDeps = {
    runCollection: async () => outcome,
    redis,
    prefix,
    lockTtlMs: 10_000,
    clock: wallClock,
    stopping: new AbortController().signal,
    log: silentLog,
    ...o,
  };
  const lock = collectionLockKey(prefix, 'acme', 'series');
  return { deps, redis, lock };
}

describe('syncCollectionProcessor: each decision of runCollectionJob to BullMQ', () => {
  it('returns the outcome with the tenant and mode, and releases the lock', async () => {
    const s = setup();
    const job = fakeJob();
    await expect(syncCollectionProcessor(s.deps)(job as unknown as Job, 'tok')).resolves.toEqual({
      ...outcome,
      tenant: 'acme',
      mode: 'incremental',
    });
    expect(await s.redis.exists(s.lock)).toBe(0);
  });

  it('delays a job whose collection is locked by another job, without running it', async () => {
    const runCollection = vi.fn(async () => outcome);
    const s = setup({ runCollection });
    await s.redis.set(s.lock, 'other', 'PX', 1500);
    const job = fakeJob();
    await expect(syncCollectionProcessor(s.deps)(job as unknown as Job, 'tok')).rejects.toBeInstanceOf(DelayedError);
    expect(job.moveToDelayed).toHaveBeenCalledWith(expect.any(Number), 'tok');
    expect(runCollection).not.toHaveBeenCalled();
    expect(await s.redis.get(s.lock)).toBe('other');
  });

  it('delays a job while its prerequisites are pending', async () => {
    const s = setup({ prerequisitesPending: async () => true });
    const job = fakeJob();
    const before = Date.now();
    await expect(syncCollectionProcessor(s.deps)(job as unknown as Job, 'tok')).rejects.toBeInstanceOf(DelayedError);
    const [at] = job.moveToDelayed.mock.calls[0] ?? [0];
    expect(at).toBeGreaterThanOrEqual(before + 2000);
  });

  it('hands a job back at once when the process stops', async () => {
    const stop = new AbortController();
    const s = setup({
      stopping: stop.signal,
      runCollection: async () => {
        stop.abort();
        throw new UnderstudyError('US_ABORTED', 'stopped');
      },
    });
    const job = fakeJob();
    await expect(syncCollectionProcessor(s.deps)(job as unknown as Job, 'tok')).rejects.toBeInstanceOf(DelayedError);
    expect(job.moveToDelayed).toHaveBeenCalledOnce();
    expect(await s.redis.exists(s.lock)).toBe(0);
  });

  const thrown: [string, Error, (e: unknown, err: Error) => void][] = [
    [
      'a refused key fails at once',
      new UnderstudyError('US_AUTH', 'GET /x -> 401'),
      (e) => {
        expect(e).toBeInstanceOf(UnrecoverableError);
        expect((e as Error).message).toBe('key refused: GET /x -> 401');
      },
    ],
    [
      'a parked read is rethrown for the worker to park',
      new GateParkedError(5000, 1000, 'read'),
      (e, err) => expect(e).toBe(err),
    ],
    ['any other error is rethrown for the queue retries', new Error('boom'), (e, err) => expect(e).toBe(err)],
  ];
  it.each(thrown)('%s', async (_name, err, check) => {
    const s = setup({
      runCollection: async () => {
        throw err;
      },
    });
    const e = await syncCollectionProcessor(s.deps)(fakeJob() as unknown as Job, 'tok').catch((x: unknown) => x);
    check(e, err);
    expect(await s.redis.exists(s.lock)).toBe(0);
  });

  it('turns a failure the sync reports on the collection into an error the queue retries', async () => {
    const s = setup({ runCollection: async () => ({ ...outcome, error: 'page 3: 503' }) });
    await expect(syncCollectionProcessor(s.deps)(fakeJob() as unknown as Job, 'tok')).rejects.toThrow('page 3: 503');
  });

  it('fails job data it cannot read', async () => {
    const s = setup();
    const run = syncCollectionProcessor(s.deps)(fakeJob({ ...data, collection: 'nope' }) as unknown as Job);
    await expect(run).rejects.toBeInstanceOf(UnrecoverableError);
  });
});
