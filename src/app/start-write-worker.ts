import { randomUUID } from 'node:crypto';
import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { applyWriteProcessor } from '../../jobs/apply-write.js';
import { closeAll, closeOnce } from '../close-all.js';
import type { Config } from '../config/config-schema.js';
import { describeError, UnderstudyError } from '../errors.js';
import type { Logger } from '../log.js';
import { instrumentWriteWorker } from '../ops/instrument-writes.js';
import { collectionLockKey, tryCollectionLock } from '../queue/collection-lock.js';
import { warnUnlessRedisDown } from '../queue/error-listeners.js';
import type { PeriodicTask } from '../queue/periodic-tasks.js';
import { type QueueWorker, startQueueWorker, type WorkerStops } from '../queue/queue-worker.js';
import { addCollectionJob, openSyncQueue, type SyncQueue } from '../queue/queues.js';
import { createRecordOrder } from '../queue/redis-record-order.js';
import { isPendingJob, openWritesQueue, WRITES_QUEUE, type WriteQueueHandle } from '../queue/write-queue.js';
import { type ScheduleClock, wallClock } from '../sync/schedule-clock.js';
import { type SyncAfterBulkDeps, syncAfterBulkWrite } from '../sync/sync-after-bulk-write.js';
import { reconcileWriteLog } from '../writes/reconcile-write-log.js';
import type { RunWriteDeps } from '../writes/run-write.js';
import type { App } from './create-app.js';
import { othersWaitingOn } from './worker-fairness.js';

/** What a caller may tune of the app's write worker (the rest comes from the app and its config). */
export interface WriteWorkerTuning {
  /** Attempts per write, the first included (config `writes.attempts`); default 8. */
  readonly attempts?: number;
  /** First backoff ceiling (doubles per retry, full jitter); default 1000 ms. */
  readonly backoffMs?: number;
  /** Cap on one backoff; default 60000 ms. */
  readonly maxBackoffMs?: number;
  /**
   * Total time a write may spend on 429s before it fails (config `writes.maxRateLimitWaitMs`); default 3600000
   * (1 hour).
   */
  readonly maxRateLimitWaitMs?: number;
  /**
   * BullMQ's job lock (config `worker.lockDurationMs`): a write whose worker died is taken up again once it expires;
   * default 30000 ms.
   */
  readonly lockDurationMs?: number;
  /** How often stalled writes are looked for (config `worker.stalledIntervalMs`); default min(30000, lock). */
  readonly stalledIntervalMs?: number;
  /** Times a write may stall (its worker died mid-write) before BullMQ fails it; default 1. */
  readonly maxStalledCount?: number;
  /** How often `write_log` rows left `running` by a dead worker are reconciled with the queue; default 60000 ms. */
  readonly sweepEveryMs?: number;
  /** Writes in flight at once in this process (they still share each key's budget); default 8. */
  readonly concurrency?: number;
  /** How often a write waiting for an earlier one on its record looks again (it is also woken); default 2000 ms. */
  readonly orderRecheckMs?: number;
  /**
   * After a bulk write: `inline` syncs the collection incrementally in the write job (taking the sync lock; when
   * a sync of it is running, a sync job is queued instead); `queue` always queues a sync job. Default `inline`.
   */
  readonly bulkSync?: 'inline' | 'queue';
  /** Aborts when the process should stop; writes in flight are handed back. */
  readonly stopping?: AbortSignal;
  /** Jitter source in [0, 1); default Math.random. */
  readonly random?: () => number;
  /** How long `close()` lets writes in flight finish before aborting them (they are handed back); default 3000 ms. */
  readonly graceMs?: number;
  /**
   * Fairness between tenants: a write that has waited `afterMs` for its key's budget while other tenants' writes
   * wait for a slot goes back to the queue for `retryInMs` and frees its slot (its requests carry the parking).
   * Default `{ afterMs: 5000, retryInMs: 1000 }`; null turns it off.
   */
  readonly parking?: { readonly afterMs: number; readonly retryInMs: number } | null;
  /** Where its periodic work (the write_log sweep, lock renewals) reads time; default the wall clock. */
  readonly clock?: ScheduleClock;
}

export interface WriteWorker extends AsyncDisposable {
  readonly worker: Worker;
  readonly queue: WriteQueueHandle;
  /** Stops taking writes, waits for those in flight (or hands them back), then closes what it opened. Idempotent. */
  close(): Promise<void>;
}

/** The tuning in force: the caller's, else config `writes` and `worker` (their defaults are the schema's). */
function tuningOf(config: Config, tuning: WriteWorkerTuning): WriteTuningInForce {
  return {
    ...tuning,
    attempts: tuning.attempts ?? config.writes.attempts,
    maxRateLimitWaitMs: tuning.maxRateLimitWaitMs ?? config.writes.maxRateLimitWaitMs,
    lockDurationMs: tuning.lockDurationMs ?? config.worker.lockDurationMs,
    ...(config.worker.stalledIntervalMs ? { stalledIntervalMs: config.worker.stalledIntervalMs } : {}),
    ...(tuning.stalledIntervalMs ? { stalledIntervalMs: tuning.stalledIntervalMs } : {}),
  };
}

type WriteTuningInForce = WriteWorkerTuning &
  Required<Pick<WriteWorkerTuning, 'attempts' | 'maxRateLimitWaitMs' | 'lockDurationMs'>>;

/** What the write worker's parts share. */
interface WriteWorkerParts {
  readonly app: App;
  readonly redis: Redis;
  readonly opts: WriteTuningInForce;
  readonly log: Logger;
  readonly queue: WriteQueueHandle;
  /** The sync queue, opened on the first bulk write that queues a sync. */
  readonly syncQueue: () => SyncQueue;
  readonly clock: ScheduleClock;
}

/** The sync after a bulk write (src/sync/sync-after-bulk-write.ts) on the app's tenants, lock and sync queue. */
function afterBulkOf(p: WriteWorkerParts): RunWriteDeps['afterBulk'] {
  const { app, redis, log } = p;
  const deps: SyncAfterBulkDeps = {
    mode: p.opts.bulkSync ?? 'inline',
    store: app.store,
    log,
    routesOf: app.routesOf,
    takeLock: (tenant, collection) =>
      tryCollectionLock({
        redis,
        key: collectionLockKey(app.prefix, tenant, collection),
        token: `write-${randomUUID()}`,
        ttlMs: 60_000,
        clock: p.clock,
        log,
      }),
    queueSync: (tenant, collection) => addCollectionJob(p.syncQueue(), { tenant, collection, mode: 'incremental' }),
  };
  return async (tenant, collection, signal) => {
    const t = app.tenant(tenant);
    if (t) await syncAfterBulkWrite(deps, t, collection, signal);
  };
}

/** The write processor over the app's tenants (as the app holds them now), store, write log and record order. */
function writeProcessor(p: WriteWorkerParts, stops: WorkerStops) {
  const { app, opts, queue } = p;
  return applyWriteProcessor({
    tenantFor: (slug) => {
      const t = app.tenant(slug);
      return t ? { client: t.client, mirrorDrafts: t.resolved.drafts } : null;
    },
    store: app.store,
    writeLog: app.writeLog,
    order: createRecordOrder({ redis: p.redis, prefix: app.prefix, isPending: (id) => isPendingJob(queue, id) }),
    promote: async (jobId) => {
      const job = await queue.getJob(jobId);
      if (job && (await job.getState()) === 'delayed') await job.promote().catch(() => undefined);
    },
    afterBulk: afterBulkOf(p),
    attempts: opts.attempts,
    backoff: { baseMs: opts.backoffMs ?? 1000, maxMs: opts.maxBackoffMs ?? 60_000 },
    maxRateLimitWaitMs: opts.maxRateLimitWaitMs,
    orderRecheckMs: opts.orderRecheckMs ?? 2000,
    ...(opts.parking === null ? {} : { parking: opts.parking ?? { afterMs: 5000, retryInMs: 1000 } }),
    othersWaiting: othersWaitingOn(app, queue, WRITE_HEAD_DEPTH),
    stopping: opts.stopping ? AbortSignal.any([opts.stopping, stops.hardStop]) : stops.hardStop,
    log: p.log,
    ...(opts.random ? { random: opts.random } : {}),
  });
}

/** How many waiting writes the fairness rule reads as the head of the queue. */
const WRITE_HEAD_DEPTH = 20;

/**
 * Keeps write_log in each job's final state, also when the process that ran it died: a sweep at start, then every
 * `everyMs` (a periodic task of the worker), and at once for a job found stalled (BullMQ requeued it, or failed it
 * after too many stalls) or failed. `settled()` waits for the sweeps running.
 */
function sweepWriteLog(p: WriteWorkerParts, everyMs: number) {
  const { queue, log } = p;
  const sweeps = new Set<Promise<number>>();
  const sweep = (jobIds?: readonly string[]): Promise<number> => {
    const run = reconcileWriteLog({ queue, writeLog: p.app.writeLog, log }, jobIds).catch((err: unknown) => {
      log.warn({ err: describeError(err) }, 'write_log sweep failed');
      return 0;
    });
    sweeps.add(run);
    void run.finally(() => sweeps.delete(run)); // tracked in `sweeps`, awaited by settled()
    return run;
  };
  const task: PeriodicTask = { everyMs, atStart: true, run: () => sweep() };
  const listen = (worker: Worker) => {
    worker.on('stalled', (jobId) => {
      log.warn({ jobId }, 'write stalled: its worker died; BullMQ takes it up again or fails it');
      void sweep([jobId]);
    });
    worker.on('failed', (job) => {
      if (job?.id) void sweep([job.id]);
    });
  };
  return { task, listen, settled: async () => void (await Promise.all([...sweeps])) };
}

/** The BullMQ worker of the writes queue, its lock and stall settings from the tuning. */
function writesWorker(p: WriteWorkerParts, periodic: readonly PeriodicTask[]): QueueWorker<unknown> {
  const { opts, app } = p;
  return startQueueWorker<unknown>({
    queue: WRITES_QUEUE,
    processor: (stops) => writeProcessor(p, stops),
    graceMs: opts.graceMs ?? 3000,
    periodic,
    clock: p.clock,
    redis: p.redis,
    prefix: app.prefix,
    log: p.log,
    processStopping: app.stopping,
    concurrency: opts.concurrency ?? 8,
    lock: {
      lockDurationMs: opts.lockDurationMs,
      stalledIntervalMs: opts.stalledIntervalMs,
      maxStalledCount: opts.maxStalledCount ?? 1,
    },
    errorWhat: 'write worker error',
    hardStopReason: new UnderstudyError('US_ABORTED', 'write worker closing'),
  });
}

/**
 * Starts the write side of `understudy worker` on the app's resources: its Redis connection and key prefix, its
 * rate gates (Redis-backed and instrumented, built in createApp), its clients, store, write log and route
 * cache; config `writes` and `worker` for attempts and locks (`tuning` wins over them). Each write takes its
 * tenant's client as the app holds it then, so a reload of the app applies to the writes that start after it. The
 * app must have Redis (profile `worker`).
 */
export async function startWriteWorker(app: App, tuning: WriteWorkerTuning = {}): Promise<WriteWorker> {
  const redis = app.redis;
  if (!redis) throw new TypeError('startWriteWorker needs an app with Redis (createApp profile "worker")');
  const opts = tuningOf(app.config, tuning);
  const log = app.log.child({ queue: WRITES_QUEUE });
  const queue = openWritesQueue(redis, app.prefix, warnUnlessRedisDown(log, 'queue error'));
  let syncQueue: SyncQueue | null = null;
  const p: WriteWorkerParts = {
    app,
    redis,
    opts,
    log,
    queue,
    syncQueue: () => {
      syncQueue ??= openSyncQueue(redis, app.prefix, warnUnlessRedisDown(app.log, 'queue error'));
      return syncQueue;
    },
    clock: opts.clock ?? wallClock,
  };
  const sweeps = sweepWriteLog(p, opts.sweepEveryMs ?? 60_000);
  // Not awaited: with Redis down at start the worker keeps reconnecting in the background, and the process must
  // still answer SIGTERM. BullMQ takes jobs once connected, including those queued before.
  const qw = writesWorker(p, [sweeps.task]);
  sweeps.listen(qw.worker);
  const tenants = app.tenants().map((t) => t.resolved.slug);
  p.log.info({ tenants, concurrency: opts.concurrency ?? 8 }, 'write worker started');
  if (app.metrics) instrumentWriteWorker(qw.worker, app.metrics);

  const close = closeOnce(() =>
    closeAll(
      [() => qw.close(), () => sweeps.settled(), () => queue.close(), async () => syncQueue?.close()],
      'the write worker',
    ),
  );
  return { worker: qw.worker, queue, close, [Symbol.asyncDispose]: close };
}
