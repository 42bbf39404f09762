import { type Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { parkJob } from '../../jobs/park-job.js';
import { type CollectionOutcome, syncCollectionProcessor } from '../../jobs/sync-collection.js';
import { syncTenantProcessor } from '../../jobs/sync-tenant.js';
import { type CloseStep, closeAll } from '../close-all.js';
import type { Config } from '../config/config-schema.js';
import { type Parking, parkedBy, withParking } from '../partners/gate-parking.js';
import { keyHash } from '../partners/key-hash.js';
import { closeWorker } from '../queue/close-worker.js';
import {
  collectionSyncPending,
  DEFAULT_RETRY,
  openSyncQueue,
  type RetryPolicy,
  SYNC_QUEUE,
  type SyncQueue,
} from '../queue/queues.js';
import { type RedisLossWatch, watchRedisLoss } from '../queue/redis-loss.js';
import { checkEvictionPolicy, isRedisConnectionError, redactRedisUrl, redisSettings } from '../queue/redis-settings.js';
import { reconcileSchedules, schedulesFor } from '../queue/schedules.js';
import { openWritesQueue } from '../queue/write-queue.js';
import { syncCollection } from '../sync/sync-collection.js';
import { prerequisitesOf, syncOrder } from '../sync/sync-tenant.js';
import { COLLECTIONS, type CollectionSlug } from '../vocabulary/collections.js';
import { type App, httpPoolsOpened } from './create-app.js';

export interface SyncWorkerOptions {
  /** Jobs run at once in this process (default config `worker.concurrency`, else 2). */
  readonly concurrency?: number;
  /** How long shutdown lets the page in flight finish before dropping it (default 7000 ms, inside a 10 s stop). */
  readonly graceMs?: number;
  /** How often the worker checks that Redis still holds its data (also on each reconnect); default 5000 ms. */
  readonly redisCheckMs?: number;
}

export interface SyncWorker extends AsyncDisposable {
  readonly queue: SyncQueue;
  /** The app's command connection (readiness pings it). */
  readonly redis: Redis;
  /** Processes sync jobs until `signal` aborts, then stops taking jobs and lets the active ones checkpoint. */
  run(signal: AbortSignal): Promise<void>;
  /** Closes the worker and its queues (the app's resources are the app's to close). Idempotent. */
  close(): Promise<void>;
}

/** A sync waiting longer than this for its key's budget gives its slot back (config `worker.parkAfterMs`). */
export const DEFAULT_PARK_AFTER_MS = 2000;
/** How long a parked sync stays delayed (config `worker.parkForMs`). */
export const DEFAULT_PARK_FOR_MS = 5000;

/**
 * Starts the sync side of `understudy worker` on the app's resources: the sync queue, its worker and the
 * schedules (reconciled at start, on each reload through the app, and after Redis lost its data).
 */
export function startSyncWorker(app: App, opts: SyncWorkerOptions = {}): SyncWorker {
  const { log } = app;
  const metrics = app.metrics;
  const config = () => app.config;
  const redis = app.redis;
  if (!redis) throw new TypeError('startSyncWorker needs an app with Redis (createApp profile "worker")');
  const prefix = app.prefix;
  const { url } = redisSettings(app.config, app.env);
  const retryOf = (c: Config): RetryPolicy => ({
    attempts: c.worker?.attempts ?? DEFAULT_RETRY.attempts,
    backoffMs: c.worker?.backoffMs ?? DEFAULT_RETRY.backoffMs,
  });
  const retry = retryOf(app.config);
  const lockDuration = app.config.worker?.lockDurationMs ?? 30_000;
  const stalledInterval = app.config.worker?.stalledIntervalMs ?? Math.min(30_000, lockDuration);
  const concurrency = opts.concurrency ?? app.config.worker?.concurrency ?? 2;

  const queue = openSyncQueue(redis, prefix);
  // A connection error is the outage the app's connection already reports, once per back-off: not again here.
  queue.on('error', (err) => {
    if (!isRedisConnectionError(err)) log.warn({ reason: err.message }, 'queue error');
  });
  // Read only for its counts: what a loss of Redis' data took with it.
  const writesQueue = openWritesQueue(redis, prefix);
  writesQueue.on('error', () => {});
  let lossWatch: RedisLossWatch | null = null;
  const routesOf = app.routesOf;

  const stopping = new AbortController();
  const hardStop = new AbortController();

  // One slow key must not starve the others: a sync job that has waited `parkAfterMs` for its key's read budget
  // while jobs of tenants on other keys wait for a slot goes back to the queue (delayed, no attempt spent).
  let headOfQueue: { at: number; tenants: Promise<string[]> } | null = null;
  const keyOf = (tenant: string): string | null => {
    const t = app.tenant(tenant);
    return t ? keyHash(t.resolved.apiKey) : null;
  };
  const othersWaiting = async (tenant: string): Promise<boolean> => {
    // The head of the queue is what a freed slot would take next; read it at most once a second.
    if (!headOfQueue || Date.now() - headOfQueue.at > 1000) {
      const at = Date.now();
      const read = queue
        .getWaiting(0, 49)
        .then((jobs) => jobs.map((j) => String((j?.data as { tenant?: unknown } | undefined)?.tenant)));
      headOfQueue = { at, tenants: read };
    }
    const mine = keyOf(tenant);
    return (await headOfQueue.tenants).some((other) => other !== tenant && keyOf(other) !== mine);
  };
  const parkingFor = (tenant: string): Parking => ({
    afterMs: config().worker?.parkAfterMs ?? DEFAULT_PARK_AFTER_MS,
    retryInMs: config().worker?.parkForMs ?? DEFAULT_PARK_FOR_MS,
    kinds: ['read'],
    worthIt: () => othersWaiting(tenant),
  });

  const runCollection = async (
    data: { tenant: string; collection: CollectionSlug; mode: 'full' | 'incremental' },
    run: { signal: AbortSignal; stop: AbortSignal },
  ): Promise<CollectionOutcome> => {
    const t = app.tenant(data.tenant);
    if (!t) throw new Error(`tenant ${data.tenant} is not in the config`);
    const routes = await routesOf(data.tenant, run.signal);
    const clockSkewMs = config().sync?.clockSkewMs;
    const report = await syncCollection(
      {
        client: t.client,
        store: app.store,
        log,
        stop: run.stop,
        ...(clockSkewMs !== undefined ? { clockSkewMs } : {}),
      },
      t.target,
      data.collection,
      data.mode,
      routes,
      run.signal,
    );
    metrics?.syncFinished({ tenant: data.tenant, mode: data.mode, report });
    return report;
  };

  // Collections reached by reference wait for the collections that reference them, as inline sync orders them.
  const prerequisitesPending = async (
    data: { tenant: string; collection: CollectionSlug },
    signal: AbortSignal,
  ): Promise<boolean> => {
    const wanted = app.tenant(data.tenant)?.resolved.collections ?? COLLECTIONS;
    const before = prerequisitesOf(data.collection, await routesOf(data.tenant, signal)).filter((c) =>
      wanted.includes(c),
    );
    for (const c of before) if (await collectionSyncPending(queue, data.tenant, c)) return true;
    return false;
  };

  const collectionJob = syncCollectionProcessor({
    runCollection,
    prerequisitesPending,
    redis,
    prefix,
    lockTtlMs: lockDuration,
    stopping: stopping.signal,
    hardStop: hardStop.signal,
    log,
  });
  const tenantJob = syncTenantProcessor({
    queue,
    retry,
    log,
    collectionsOf: async (tenant, signal) => {
      const t = app.tenant(tenant)?.resolved;
      if (!t) return null;
      const wanted = t.collections && t.collections.length > 0 ? t.collections : COLLECTIONS;
      // Listable collections first: the ones reached by reference read the records that point at them.
      return syncOrder(wanted, await routesOf(tenant, signal));
    },
  });

  let worker: Worker | null = null;
  let closing: Promise<void> | null = null;

  const close = (): Promise<void> => {
    closing ??= (async () => {
      stopping.abort();
      lossWatch?.stop();
      const steps: CloseStep[] = [
        async () => (worker ? closeWorker(worker) : undefined),
        () => queue.close(),
        () => writesQueue.close(),
      ];
      await closeAll(steps, 'the sync worker');
    })();
    return closing;
  };

  // Schedules follow the config: reconciled on each reload (after the app rebuilt the tenants' clients).
  app.onReload(async (a) => {
    await reconcileSchedules(queue, schedulesFor(a.config.tenants), log, retryOf(a.config));
  });
  return {
    queue,
    redis,
    async run(signal) {
      log.info(
        {
          redis: redactRedisUrl(url),
          prefix,
          concurrency,
          tenants: app.tenants().map((t) => t.resolved.slug),
          httpPools: httpPoolsOpened(),
        },
        'worker starting',
      );
      // Redis may be down at start: commands wait for it, but a stop request must not.
      const stopped = new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        else signal.addEventListener('abort', () => resolve(), { once: true });
      });
      const startup = (async () => {
        await checkEvictionPolicy(redis, log);
        try {
          await reconcileSchedules(queue, schedulesFor(config().tenants), log, retry);
        } catch (err) {
          // Another worker starting at the same moment may be reconciling too; its pass covers this one. A worker
          // that cannot reconcile still processes jobs rather than exiting.
          log.warn({ reason: (err as Error).message }, 'schedules not reconciled at start');
        }
        // Redis emptied under us (FLUSHALL, a restart without persistence): schedules come back, the loss is told.
        lossWatch = watchRedisLoss({
          redis,
          prefix,
          queues: [queue, writesQueue],
          ...(opts.redisCheckMs ? { intervalMs: opts.redisCheckMs } : {}),
          log,
          ...(metrics ? { onLoss: () => metrics.redisDataLost() } : {}),
          recover: async () => {
            // The upstream still counts the requests of the current window, which Redis forgot: hold every key for
            // one window (the gates do it themselves when they next ask; this covers a process that never asked).
            await Promise.all(app.gates().map(({ gate, windowMs }) => gate.pause(windowMs + 250)));
            const specs = schedulesFor(config().tenants);
            const { failed } = await reconcileSchedules(queue, specs, log, retry);
            return specs.map((s) => s.id).filter((id) => !failed.some((f) => f.id === id));
          },
        });
        if (stopping.signal.aborted) lossWatch.stop();
        else await lossWatch.check();
      })();
      startup.catch(() => {}); // awaited below, or abandoned when stopped first
      await Promise.race([startup, stopped]);
      if (signal.aborted) return;
      const w = new Worker(
        SYNC_QUEUE,
        async (job: Job, token?: string, jobSignal?: AbortSignal) => {
          const tenant = String((job.data as { tenant?: unknown } | undefined)?.tenant);
          try {
            return await withParking<unknown>(parkingFor(tenant), () =>
              job.name === 'sync-tenant' ? tenantJob(job, token, jobSignal) : collectionJob(job, token, jobSignal),
            );
          } catch (err) {
            // A fan-out's route discovery, or a collection job's look at its prerequisites, parked before its sync.
            const parked = parkedBy(err);
            if (parked) {
              metrics?.syncParked({ tenant });
              return await parkJob(job, token, parked, log.child({ jobId: job.id, tenant }));
            }
            throw err;
          }
        },
        {
          connection: redis,
          prefix,
          concurrency,
          lockDuration,
          stalledInterval,
          maxStalledCount: 2,
          autorun: true,
        },
      );
      worker = w;
      w.on('error', (err) => {
        if (!isRedisConnectionError(err)) log.warn({ reason: err.message }, 'worker error');
      });
      w.on('failed', (job, err) =>
        log.warn(
          { jobId: job?.id, name: job?.name, attemptsMade: job?.attemptsMade, reason: err.message },
          'job failed',
        ),
      );
      w.on('stalled', (jobId) => log.warn({ jobId }, 'job stalled: a worker died; it runs again'));
      await stopped;
      log.info('stopping: letting active syncs commit their page');
      stopping.abort();
      const grace = setTimeout(() => hardStop.abort(), opts.graceMs ?? 7000);
      grace.unref();
      try {
        // Not a bare w.close(): a stop just after start would close mid-handshake (see closeWorker).
        await closeWorker(w);
      } finally {
        clearTimeout(grace);
      }
      log.info('worker stopped');
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
