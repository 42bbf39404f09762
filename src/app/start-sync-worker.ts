import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { parkJob } from '../../jobs/park-job.js';
import { type RunCollection, syncCollectionProcessor } from '../../jobs/sync-collection.js';
import { syncTenantProcessor } from '../../jobs/sync-tenant.js';
import { type CloseStep, closeAll, closeOnce } from '../close-all.js';
import type { Config } from '../config/config-schema.js';
import { type Parking, parkedBy, parkingClient } from '../partners/gate-parking.js';
import { warnUnlessRedisDown } from '../queue/error-listeners.js';
import { configuredLock, type QueueWorker, startQueueWorker, type WorkerStops } from '../queue/queue-worker.js';
import {
  collectionSyncPending,
  DEFAULT_RETRY,
  openSyncQueue,
  type RetryPolicy,
  SYNC_QUEUE,
  type SyncQueue,
} from '../queue/queues.js';
import { type RedisLossWatch, watchRedisLoss } from '../queue/redis-loss.js';
import { checkEvictionPolicy, redactRedisUrl, redisSettings } from '../queue/redis-settings.js';
import { reconcileSchedules, schedulesFor } from '../queue/schedules.js';
import { openWritesQueue, type WriteQueueHandle } from '../queue/write-queue.js';
import { prerequisitesPending } from '../sync/prerequisites-pending.js';
import { type ScheduleClock, wallClock } from '../sync/schedule-clock.js';
import { syncCollection } from '../sync/sync-collection.js';
import { syncOrder } from '../sync/sync-tenant.js';
import { wantedCollections } from '../sync/wanted-collections.js';
import { appSyncDeps } from './app-sync-deps.js';
import type { App } from './create-app.js';
import { othersWaitingOn } from './worker-fairness.js';

export interface SyncWorkerOptions {
  /** Jobs run at once in this process (default config `worker.concurrency`, else 2). */
  readonly concurrency?: number;
  /** How long shutdown lets the page in flight finish before dropping it (default 7000 ms, inside a 10 s stop). */
  readonly graceMs?: number;
  /** How often the worker checks that Redis still holds its data (also on each reconnect); default 5000 ms. */
  readonly redisCheckMs?: number;
  /** Where its periodic work reads time (default the wall clock). */
  readonly clock?: ScheduleClock;
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

/** How many waiting jobs the fairness rule reads as the head of the sync queue. */
const SYNC_HEAD_DEPTH = 50;

const retryOf = (c: Config): RetryPolicy => ({
  attempts: c.worker.attempts ?? DEFAULT_RETRY.attempts,
  backoffMs: c.worker.backoffMs ?? DEFAULT_RETRY.backoffMs,
});

/** What the sync worker's parts share. */
interface SyncWorkerParts {
  readonly app: App;
  readonly redis: Redis;
  readonly opts: SyncWorkerOptions;
  readonly queue: SyncQueue;
  /** Read only for its counts: what a loss of Redis' data took with it. */
  readonly writesQueue: WriteQueueHandle;
  /** The retry policy at start (schedules reconciled after a reload take the reloaded one). */
  readonly retry: RetryPolicy;
  readonly concurrency: number;
  readonly clock: ScheduleClock;
  /** Aborts at shutdown, before the worker exists too (its own `closing` is the same moment once it does). */
  readonly stopping: AbortController;
  worker: QueueWorker<unknown> | null;
  lossWatch: RedisLossWatch | null;
}

/** One collection sync of a queued job, on the tenant's client and routes (parking), reported to the metrics. */
const runCollectionOf =
  (app: App, parkingFor: (tenant: string) => Parking): RunCollection =>
  async (data, run) => {
    const t = app.tenant(data.tenant);
    if (!t) throw new Error(`tenant ${data.tenant} is not in the config`);
    const routes = await app.routesOf(data.tenant, run.signal, parkingFor(data.tenant));
    const client = parkingClient(t.client, parkingFor(data.tenant));
    const report = await syncCollection(
      appSyncDeps(app, client, run.stop),
      t.target,
      data.collection,
      data.mode,
      routes,
      run.signal,
    );
    app.metrics?.syncFinished({ tenant: data.tenant, mode: data.mode, report });
    return report;
  };

/** The processors of both job kinds; a job that waits too long for its key's budget is parked (see fairness). */
function syncProcessor(p: SyncWorkerParts, stops: WorkerStops) {
  const { app, queue, redis } = p;
  const { log } = app;
  // Every request of a sync job carries its tenant's parking: route discovery, and the sync (runCollectionOf).
  const parkingFor = parking(app, othersWaitingOn(app, queue, SYNC_HEAD_DEPTH));
  const routesOf = (tenant: string, signal: AbortSignal) => app.routesOf(tenant, signal, parkingFor(tenant));
  const collectionJob = syncCollectionProcessor({
    runCollection: runCollectionOf(app, parkingFor),
    // Collections reached by reference wait for the collections that reference them, as inline sync orders them.
    prerequisitesPending: async (data, signal) =>
      prerequisitesPending(
        data.collection,
        wantedCollections(app.tenant(data.tenant)?.target ?? {}),
        await routesOf(data.tenant, signal),
        (c) => collectionSyncPending(queue, data.tenant, c),
      ),
    redis,
    prefix: app.prefix,
    lockTtlMs: app.config.worker.lockDurationMs,
    stopping: stops.closing,
    hardStop: stops.hardStop,
    clock: p.clock,
    log,
  });
  const tenantJob = syncTenantProcessor({
    queue,
    retry: p.retry,
    log,
    collectionsOf: async (tenant, signal) => {
      const t = app.tenant(tenant);
      // Listable collections first: the ones reached by reference read the records that point at them.
      return t ? syncOrder(wantedCollections(t.target), await routesOf(tenant, signal)) : null;
    },
  });
  return async (job: Job, token?: string, jobSignal?: AbortSignal): Promise<unknown> => {
    const tenant = String((job.data as { tenant?: unknown } | undefined)?.tenant);
    try {
      return await (job.name === 'sync-tenant'
        ? tenantJob(job, token, jobSignal)
        : collectionJob(job, token, jobSignal));
    } catch (err) {
      // A fan-out's route discovery, or a collection job's look at its prerequisites, parked before its sync.
      const parked = parkedBy(err);
      if (!parked) throw err;
      app.metrics?.syncParked({ tenant });
      return await parkJob(job, token, parked, log.child({ jobId: job.id, tenant }));
    }
  };
}

/**
 * One slow key must not starve the others: a sync job that has waited `parkAfterMs` for its key's read budget
 * while jobs of tenants on other keys wait for a slot goes back to the queue (delayed, no attempt spent).
 */
const parking =
  (app: App, othersWaiting: (tenant: string) => Promise<boolean>) =>
  (tenant: string): Parking => ({
    afterMs: app.config.worker.parkAfterMs,
    retryInMs: app.config.worker.parkForMs,
    kinds: ['read'],
    worthIt: () => othersWaiting(tenant),
  });

/** Before taking jobs: the eviction policy, the schedules, and the watch for Redis losing its data. */
async function prepare(p: SyncWorkerParts): Promise<void> {
  const { app, queue, redis } = p;
  const { log } = app;
  await checkEvictionPolicy(redis, log);
  try {
    await reconcileSchedules(queue, schedulesFor(app.config.tenants), log, p.retry);
  } catch (err) {
    // Another worker starting at the same moment may be reconciling too; its pass covers this one. A worker
    // that cannot reconcile still processes jobs rather than exiting. Stopped meanwhile (its connections closed
    // under the reconcile, Redis down): the stop's own line says so.
    if (p.stopping.signal.aborted || app.stopping.aborted)
      log.debug({ reason: (err as Error).message }, 'schedules not reconciled: stopping');
    else log.warn({ reason: (err as Error).message }, 'schedules not reconciled at start');
  }
  // Redis emptied under us (FLUSHALL, a restart without persistence): schedules come back, the loss is told.
  const metrics = app.metrics;
  const lossWatch = watchRedisLoss({
    redis,
    prefix: app.prefix,
    queues: [queue, p.writesQueue],
    ...(p.opts.redisCheckMs ? { intervalMs: p.opts.redisCheckMs } : {}),
    clock: p.clock,
    log,
    ...(metrics ? { onLoss: () => metrics.redisDataLost() } : {}),
    recover: async () => {
      // The upstream still counts the requests of the current window, which Redis forgot: hold every key for
      // one window (the gates do it themselves when they next ask; this covers a process that never asked).
      await Promise.all(app.gates().map(({ gate, windowMs }) => gate.pause(windowMs + 250)));
      const specs = schedulesFor(app.config.tenants);
      const { failed } = await reconcileSchedules(queue, specs, log, p.retry);
      return specs.map((s) => s.id).filter((id) => !failed.some((f) => f.id === id));
    },
  });
  p.lossWatch = lossWatch;
  if (p.stopping.signal.aborted) lossWatch.stop();
  else await lossWatch.check();
}

/** The BullMQ worker of the sync queue: its jobs get the grace at shutdown, then their requests are dropped. */
function syncWorker(p: SyncWorkerParts): QueueWorker<unknown> {
  const { app } = p;
  const { log } = app;
  const w = startQueueWorker<unknown>({
    queue: SYNC_QUEUE,
    processor: (stops) => syncProcessor(p, stops),
    graceMs: p.opts.graceMs ?? 7000,
    clock: p.clock,
    redis: p.redis,
    prefix: app.prefix,
    log,
    processStopping: app.stopping,
    concurrency: p.concurrency,
    lock: configuredLock(app.config.worker, 2),
    errorWhat: 'worker error',
  });
  w.worker.on('failed', (job, err) =>
    log.warn({ jobId: job?.id, name: job?.name, attemptsMade: job?.attemptsMade, reason: err.message }, 'job failed'),
  );
  w.worker.on('stalled', (jobId) => log.warn({ jobId }, 'job stalled: a worker died; it runs again'));
  return w;
}

/** Resolves when `signal` aborts (at once when it has). */
const aborted = (signal: AbortSignal): Promise<void> =>
  new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });

/** Processes sync jobs until `signal` aborts, then stops taking jobs and lets the active ones checkpoint. */
async function runSyncWorker(p: SyncWorkerParts, signal: AbortSignal): Promise<void> {
  const { app } = p;
  const { log } = app;
  const { url } = redisSettings(app.config, app.env);
  const tenants = app.tenants().map((t) => t.resolved.slug);
  const starting = { redis: redactRedisUrl(url), prefix: app.prefix, concurrency: p.concurrency, tenants };
  log.info({ ...starting, httpPools: app.httpPools }, 'worker starting');
  // Redis may be down at start: commands wait for it, but a stop request must not.
  const stopped = aborted(signal);
  const startup = prepare(p);
  startup.catch(() => {}); // awaited below, or abandoned when stopped first
  await Promise.race([startup, stopped]);
  if (signal.aborted) return;
  const w = syncWorker(p);
  p.worker = w;
  await stopped;
  log.info('stopping: letting active syncs commit their page');
  p.stopping.abort();
  await w.close();
  log.info('worker stopped');
}

/**
 * Starts the sync side of `understudy worker` on the app's resources: the sync queue, its worker and the
 * schedules (reconciled at start, on each reload through the app, and after Redis lost its data).
 */
export function startSyncWorker(app: App, opts: SyncWorkerOptions = {}): SyncWorker {
  const { log } = app;
  const redis = app.redis;
  if (!redis) throw new TypeError('startSyncWorker needs an app with Redis (createApp profile "worker")');
  const queue = openSyncQueue(redis, app.prefix, warnUnlessRedisDown(log, 'queue error'));
  const writesQueue = openWritesQueue(redis, app.prefix, warnUnlessRedisDown(log, 'queue error'));
  const p: SyncWorkerParts = {
    app,
    redis,
    opts,
    queue,
    writesQueue,
    retry: retryOf(app.config),
    concurrency: opts.concurrency ?? app.config.worker.concurrency ?? 2,
    clock: opts.clock ?? wallClock,
    stopping: new AbortController(),
    worker: null,
    lossWatch: null,
  };
  const close = closeOnce(async () => {
    p.stopping.abort();
    p.lossWatch?.stop();
    const steps: CloseStep[] = [async () => p.worker?.close(), () => queue.close(), () => writesQueue.close()];
    await closeAll(steps, 'the sync worker');
  });
  // Schedules follow the config: reconciled on each reload (after the app rebuilt the tenants' clients).
  app.onReload(async (a) => {
    await reconcileSchedules(queue, schedulesFor(a.config.tenants), log, retryOf(a.config));
  });
  return { queue, redis, run: (signal) => runSyncWorker(p, signal), close, [Symbol.asyncDispose]: close };
}
