import { randomUUID } from 'node:crypto';
import { Worker } from 'bullmq';
import { applyWriteProcessor, type WriteTenant } from '../../jobs/apply-write.js';
import { type CloseStep, closeAll } from '../close-all.js';
import type { ResolvedTenant } from '../config/resolve-tenants.js';
import { describeError, UnderstudyError } from '../errors.js';
import { instrumentWriteWorker } from '../ops/instrument-writes.js';
import { closeWorker } from '../queue/close-worker.js';
import { collectionLockKey, tryCollectionLock } from '../queue/collection-lock.js';
import { addCollectionJob, openSyncQueue, type SyncQueue } from '../queue/queues.js';
import { createRecordOrder } from '../queue/redis-record-order.js';
import { isRedisConnectionError } from '../queue/redis-settings.js';
import { isPendingJob, openWritesQueue, WRITES_QUEUE, type WriteQueueHandle } from '../queue/write-queue.js';
import { syncCollection } from '../sync/sync-collection.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import { reconcileWriteLog } from '../writes/reconcile-write-log.js';
import type { App, TenantSettings } from './create-app.js';

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
   * wait for a slot goes back to the queue for `retryInMs` and frees its slot (the app's gates are parkable).
   * Default `{ afterMs: 5000, retryInMs: 1000 }`; null turns it off.
   */
  readonly parking?: { readonly afterMs: number; readonly retryInMs: number } | null;
}

export interface WriteWorker extends AsyncDisposable {
  readonly worker: Worker;
  readonly queue: WriteQueueHandle;
  /** Takes the app's tenants again (config reload): current keys' clients; writes in flight keep theirs. */
  reload(): void;
  /** Stops taking writes, waits for those in flight (or hands them back), then closes what it opened. Idempotent. */
  close(): Promise<void>;
}

/** Default of config `writes.maxRateLimitWaitMs`: a write gives up after an hour of 429s. */
export const DEFAULT_MAX_RATE_LIMIT_WAIT_MS = 3_600_000;

/**
 * Starts the write side of `understudy worker` on the app's resources: its Redis connection and key prefix, its
 * rate gates (Redis-backed, instrumented and parkable, built in createApp), its clients, store, write log and route
 * cache; config `writes` and `worker` for attempts and locks (`tuning` wins over them). A reload of the app replaces
 * the tenants. The app must have Redis (profile `worker`).
 */
export async function startWriteWorker(app: App, tuning: WriteWorkerTuning = {}): Promise<WriteWorker> {
  const { config } = app;
  const redis = app.redis;
  if (!redis) throw new TypeError('startWriteWorker needs an app with Redis (createApp profile "worker")');
  const opts: WriteWorkerTuning = {
    ...(config.writes?.attempts ? { attempts: config.writes.attempts } : {}),
    ...(config.writes?.maxRateLimitWaitMs !== undefined
      ? { maxRateLimitWaitMs: config.writes.maxRateLimitWaitMs }
      : {}),
    ...(config.worker?.lockDurationMs ? { lockDurationMs: config.worker.lockDurationMs } : {}),
    ...(config.worker?.stalledIntervalMs ? { stalledIntervalMs: config.worker.stalledIntervalMs } : {}),
    ...tuning,
  };
  const { prefix, writeLog } = app;
  const log = app.log.child({ queue: WRITES_QUEUE });
  const stop = new AbortController();
  const stopping = opts.stopping ? AbortSignal.any([opts.stopping, stop.signal]) : stop.signal;
  const queue = openWritesQueue(redis, prefix);
  let syncQueue: SyncQueue | null = null;
  const syncQueueOf = () => {
    syncQueue ??= openSyncQueue(redis, prefix);
    return syncQueue;
  };
  const order = createRecordOrder({ redis, prefix, isPending: (id) => isPendingJob(queue, id) });

  // Each tenant's client (its key, its key's gate, the app's one pool), as the app holds it now.
  const tenants = new Map<string, { resolved: ResolvedTenant; tenant: WriteTenant }>();
  const setTenants = (settings: readonly TenantSettings[]) => {
    tenants.clear();
    for (const t of settings)
      tenants.set(t.resolved.slug, {
        resolved: t.resolved,
        tenant: { client: t.client, mirrorDrafts: t.resolved.drafts },
      });
  };
  setTenants(app.tenants());

  const queueSync = async (tenant: string, collection: CollectionSlug) => {
    const id = await addCollectionJob(syncQueueOf(), {
      tenant: tenants.get(tenant)?.resolved.slug ?? (tenant as ResolvedTenant['slug']),
      collection,
      mode: 'incremental',
    });
    log.info({ tenant, collection, syncJobId: id }, 'bulk write: incremental sync queued');
  };

  const afterBulk = async (tenant: string, collection: CollectionSlug, signal: AbortSignal): Promise<void> => {
    const entry = tenants.get(tenant);
    if (!entry) return;
    if ((opts.bulkSync ?? 'inline') === 'queue') return queueSync(tenant, collection);
    const lock = await tryCollectionLock({
      redis,
      key: collectionLockKey(prefix, tenant, collection),
      token: `write-${randomUUID()}`,
      ttlMs: 60_000,
      log,
    });
    if (!lock.held) return queueSync(tenant, collection);
    try {
      const { resolved, tenant: t } = entry;
      const known = await app.routesOf(tenant, signal);
      const report = await syncCollection(
        { client: t.client, store: app.store, log },
        {
          slug: resolved.slug,
          drafts: resolved.drafts,
          ...(resolved.collections ? { collections: resolved.collections } : {}),
          ...(resolved.locales ? { locales: resolved.locales } : {}),
        },
        collection,
        'incremental',
        known,
        signal,
      );
      if (report.error) throw new UnderstudyError('US_UPSTREAM', `incremental sync of ${collection}: ${report.error}`);
      if (report.skipped) log.warn({ collection, reason: report.skipped }, 'bulk write: collection cannot be synced');
    } finally {
      await lock.lock.release();
    }
  };

  let headOfQueue: { at: number; tenants: Promise<Set<string>> } | null = null;
  const processor = applyWriteProcessor({
    tenantFor: (slug) => tenants.get(slug)?.tenant ?? null,
    store: app.store,
    writeLog,
    order,
    promote: async (jobId) => {
      const job = await queue.getJob(jobId);
      if (job && (await job.getState()) === 'delayed') await job.promote().catch(() => undefined);
    },
    afterBulk,
    attempts: opts.attempts ?? 8,
    backoff: { baseMs: opts.backoffMs ?? 1000, maxMs: opts.maxBackoffMs ?? 60_000 },
    maxRateLimitWaitMs: opts.maxRateLimitWaitMs ?? DEFAULT_MAX_RATE_LIMIT_WAIT_MS,
    orderRecheckMs: opts.orderRecheckMs ?? 2000,
    ...(opts.parking === null ? {} : { parking: opts.parking ?? { afterMs: 5000, retryInMs: 1000 } }),
    othersWaiting: async (tenant) => {
      // The head of the queue is what a freed slot would take next; read it at most once a second.
      if (!headOfQueue || Date.now() - headOfQueue.at > 1000) {
        const at = Date.now();
        const tenants = queue
          .getWaiting(0, 19)
          .then((jobs) => new Set(jobs.map((j) => String((j?.data as { tenant?: unknown } | undefined)?.tenant))));
        headOfQueue = { at, tenants };
      }
      const waiting = await headOfQueue.tenants;
      return [...waiting].some((t) => t !== tenant);
    },
    stopping,
    log,
    ...(opts.random ? { random: opts.random } : {}),
  });
  const lockDuration = opts.lockDurationMs ?? 30_000;
  const worker = new Worker(WRITES_QUEUE, processor, {
    connection: redis,
    prefix,
    concurrency: opts.concurrency ?? 8,
    autorun: true,
    lockDuration,
    stalledInterval: opts.stalledIntervalMs ?? Math.min(30_000, lockDuration),
    maxStalledCount: opts.maxStalledCount ?? 1,
  });
  // A connection error is the outage the app's connection already reports, once per back-off: not again here.
  worker.on('error', (err) => {
    if (!isRedisConnectionError(err)) log.warn({ err: describeError(err) }, 'write worker error');
  });
  // write_log must end in each job's final state, also when the process that ran it died: sweep at start, then
  // periodically, and at once for a job found stalled (BullMQ requeued it, or failed it after too many stalls).
  const reconcile = (jobIds?: readonly string[]) =>
    reconcileWriteLog({ queue, writeLog, log }, jobIds).catch((err: unknown) => {
      log.warn({ err: describeError(err) }, 'write_log sweep failed');
      return 0;
    });
  const sweeps = new Set<Promise<number>>();
  const track = (p: Promise<number>) => {
    sweeps.add(p);
    void p.finally(() => sweeps.delete(p)); // tracked in `sweeps`, awaited by close()
  };
  track(reconcile());
  const sweepTimer = setInterval(() => track(reconcile()), opts.sweepEveryMs ?? 60_000);
  sweepTimer.unref();
  worker.on('stalled', (jobId) => {
    log.warn({ jobId }, 'write stalled: its worker died; BullMQ takes it up again or fails it');
    track(reconcile([jobId]));
  });
  worker.on('failed', (job) => {
    if (job?.id) track(reconcile([job.id]));
  });
  // Not awaited: with Redis down at start the worker keeps reconnecting in the background, and the process must
  // still answer SIGTERM. BullMQ takes jobs once connected, including those queued before.
  log.info({ tenants: [...tenants.keys()], concurrency: opts.concurrency ?? 8 }, 'write worker started');

  let closing: Promise<void> | null = null;
  const handle: WriteWorker = {
    worker,
    queue,
    reload: () => setTenants(app.tenants()),
    [Symbol.asyncDispose]: () => handle.close(),
    close() {
      closing ??= (async () => {
        // Writes in flight get a grace period to finish; then their waits and requests are aborted and handed back.
        const grace = setTimeout(
          () => stop.abort(new UnderstudyError('US_ABORTED', 'write worker closing')),
          opts.graceMs ?? 3000,
        );
        grace.unref();
        const steps: CloseStep[] = [
          async () => {
            try {
              // Not a bare worker.close(): closing mid-handshake would leave BullMQ an unhandled rejection.
              await closeWorker(worker);
            } finally {
              clearTimeout(grace);
            }
          },
          async () => {
            clearInterval(sweepTimer);
            await Promise.all([...sweeps]);
          },
          () => queue.close(),
          async () => syncQueue?.close(),
        ];
        await closeAll(steps, 'the write worker');
      })();
      return closing;
    },
  };

  if (app.metrics) instrumentWriteWorker(worker, app.metrics);
  app.onReload(() => handle.reload());
  return handle;
}
