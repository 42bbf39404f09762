import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { Agent } from 'undici';
import { type DeliverDeps, deliverWebhookProcessor } from '../../jobs/deliver-webhook.js';
import { runCheckProcessor } from '../../jobs/run-check.js';
import {
  DISPATCH_POLL_MS,
  dispatchDebounce,
  FIRST_PRUNE_AFTER_MS,
  PRUNE_EVERY_MS,
  pruneBefore,
} from '../changes/change-pace.js';
import type { WebhookSender } from '../changes/deliver-webhook.js';
import { dispatchWebhooks } from '../changes/dispatch-webhooks.js';
import { httpWebhookSender } from '../changes/http-webhook-sender.js';
import { webhookRetryDelay } from '../changes/retry-schedule.js';
import type { WebhookBatch } from '../changes/webhook-batch.js';
import { checkSecrets, endpointsOf } from '../changes/webhook-endpoints.js';
import { type CloseStep, closeAll, closeOnce } from '../close-all.js';
import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import { registerChangeMetrics } from '../ops/change-metrics.js';
import { CHECKS_QUEUE, type CheckQueue, openCheckQueue, reconcileCheckSchedules } from '../queue/check-schedules.js';
import { warnUnlessRedisDown } from '../queue/error-listeners.js';
import type { PeriodicTask } from '../queue/periodic-tasks.js';
import { type QueueWorker, startQueueWorker } from '../queue/queue-worker.js';
import { isRedisConnectionError } from '../queue/redis-settings.js';
import { openWebhookQueue, WEBHOOKS_QUEUE, type WebhookQueue, webhookBatchQueue } from '../queue/webhook-queue.js';
import { type ScheduleClock, wallClock } from '../sync/schedule-clock.js';
import { checkedRecently, checkTenant, type TenantCheck } from '../sync/self-check.js';
import type { App } from './create-app.js';

export interface ChangeWorkerOptions {
  /** The wait before retry n of a batch (default: src/changes/retry-schedule.ts; tests scale it down). */
  readonly backoff?: (retry: number) => number;
  /** Attempts per batch (default 18, over 24 h). */
  readonly attempts?: number;
  /** How often the log's end is looked at for new changes (default `DISPATCH_POLL_MS`, 200 ms). */
  readonly pollMs?: number;
  /** How often old changes are pruned (default hourly; the first prune a minute after start). */
  readonly pruneEveryMs?: number;
  /** How long shutdown lets deliveries in flight finish before cutting them (default 5000 ms). */
  readonly graceMs?: number;
  /** Sends deliveries (default: undici, on an agent of its own). */
  readonly sender?: WebhookSender;
  /** Where its periodic work (dispatch polls, prunes, schedule reconciles) reads time; default the wall clock. */
  readonly clock?: ScheduleClock;
}

export interface ChangeWorker extends AsyncDisposable {
  readonly queues: readonly [WebhookQueue, CheckQueue];
  /** Hands each endpoint its next batch now (also done on its own as changes commit). */
  dispatch(): Promise<void>;
  /** Stops dispatching, pruning and checking; lets deliveries in flight finish. Idempotent. */
  close(): Promise<void>;
}

/** Check schedules are reconciled this often too, so they come back after Redis lost its data. */
const CHECK_RECONCILE_EVERY_MS = 5 * 60_000;

/**
 * Dispatch: when the log's end moves, when a delivery of this process ends (`nudge`), every 2 s for others'
 * (src/changes/change-pace.ts). `task` polls the log's end; `settled()` waits for the pass running.
 */
function dispatching(app: App, batches: ReturnType<typeof webhookBatchQueue>, pollMs: number) {
  const { log } = app;
  const debounce = dispatchDebounce();
  let running: Promise<void> | null = null;
  const dispatch = (): Promise<void> => {
    running ??= (async () => {
      try {
        if (!debounce.due(await app.changes.lastSeq(), Date.now())) return;
        await dispatchWebhooks({ log: app.changes, queue: batches, endpoints: endpointsOf(app.config), logger: log });
      } catch (err) {
        // Redis down is what the connection's own lines report (and a connection ended at stop fails its wait).
        if (!isRedisConnectionError(err))
          log.warn({ err: describeError(err) }, 'webhook dispatch failed; trying again');
      } finally {
        running = null;
      }
    })();
    return running;
  };
  const nudge = () => {
    debounce.nudge();
    void dispatch(); // its failures are logged inside
  };
  const task: PeriodicTask = { everyMs: pollMs, run: dispatch };
  return { dispatch, nudge, task, settled: async () => running ?? undefined };
}

/** Prunes changes older than `changes.retainDays`: a minute after start, then every `everyMs` (hourly). */
const pruning = (app: App, everyMs: number): PeriodicTask => ({
  everyMs,
  firstAfterMs: FIRST_PRUNE_AFTER_MS,
  run: async () => {
    try {
      const before = pruneBefore(Date.now(), app.config.changes.retainDays);
      const n = await app.changes.prune(before);
      if (n > 0) app.log.info({ pruned: n, before }, 'change log pruned');
    } catch (err) {
      app.log.warn({ err: describeError(err) }, 'change log prune failed; trying again next time');
    }
  },
});

/**
 * The scheduled self-check of one tenant: counts only (`check --counts`), a read per collection and variant of the
 * key's budget, one check a minute per tenant at most. Comparing ids costs a read per page: `understudy check`.
 */
const checkTenantOf =
  (app: App, stopping: AbortSignal) =>
  async (slug: string, signal: AbortSignal): Promise<TenantCheck | 'recent' | null> => {
    const t = app.tenant(slug);
    if (!t) return null;
    if (checkedRecently(await app.changes.lastChecks(), slug, Date.now())) return 'recent';
    const routes = await app.routesOf(slug, signal);
    const s = AbortSignal.any([signal, stopping]);
    return checkTenant(
      { client: t.client, store: app.store, checks: app.changes, signal: s, countsOnly: true },
      t.target,
      routes,
    );
  };

/** What the change feed's two workers share. */
interface ChangeWorkerParts {
  readonly app: App;
  readonly redis: Redis;
  readonly graceMs: number;
  readonly clock: ScheduleClock;
  /** Aborts when the change worker starts closing (the checks in flight stop). */
  readonly stopping: AbortSignal;
}

/** The worker's common settings for one of its queues. */
const workerBase = (p: ChangeWorkerParts, what: string) => ({
  graceMs: p.graceMs,
  clock: p.clock,
  redis: p.redis,
  prefix: p.app.prefix,
  log: p.app.log,
  processStopping: p.app.stopping,
  errorWhat: what,
});

/**
 * The BullMQ worker delivering webhook batches (many at once), on the sender's own HTTP agent; at shutdown the
 * deliveries in flight get the grace, then are cut (each is tried again later). It runs the feed's periodic work.
 */
function deliveryWorker(
  p: ChangeWorkerParts,
  deps: Omit<DeliverDeps, 'stop'>,
  backoff: (retry: number) => number,
  periodic: readonly PeriodicTask[],
): QueueWorker<WebhookBatch> {
  return startQueueWorker<WebhookBatch>({
    ...workerBase(p, 'webhook worker error'),
    queue: WEBHOOKS_QUEUE,
    processor: (stops) => deliverWebhookProcessor({ ...deps, stop: stops.hardStop }),
    concurrency: Math.max(32, endpointsOf(p.app.config).length),
    backoff,
    periodic,
  });
}

/** The BullMQ worker running scheduled self-checks, one at a time. */
function checkWorker(p: ChangeWorkerParts): QueueWorker<unknown> {
  const runCheck = runCheckProcessor({ log: p.app.log, checkTenant: checkTenantOf(p.app, p.stopping) });
  return startQueueWorker<unknown>({
    ...workerBase(p, 'check worker error'),
    queue: CHECKS_QUEUE,
    processor: () => runCheck as (job: Job) => Promise<unknown>,
    concurrency: 1,
  });
}

/** Check schedules follow the config: at start (not awaited: Redis may be down), every 5 minutes and on reload. */
function reconcilingChecks(app: App, checks: CheckQueue): { reconcile(): Promise<void>; task: PeriodicTask } {
  const reconcile = () =>
    reconcileCheckSchedules(checks, app.config.tenants, app.log).catch((err) => {
      if (!isRedisConnectionError(err)) app.log.warn({ reason: describeError(err) }, 'check schedules not reconciled');
    });
  return { reconcile, task: { everyMs: CHECK_RECONCILE_EVERY_MS, atStart: true, run: reconcile } };
}

/** Webhook secrets are checked again on reload; a missing one is logged, and its endpoint's deliveries fail. */
function onReloadOf(reconcile: () => Promise<void>, nudge: () => void, log: Logger) {
  return async (a: App) => {
    try {
      checkSecrets(endpointsOf(a.config), a.env);
    } catch (err) {
      log.error({ err: describeError(err) }, 'webhook secrets after reload');
    }
    await reconcile();
    nudge();
  };
}

/**
 * The change feed's side of `understudy worker`: webhook batches dispatched as changes commit and delivered by
 * their own BullMQ worker (many at once, one batch per endpoint at a time, on an HTTP agent of their own, so a slow
 * receiver delays no sync, write or other endpoint), old changes pruned, and scheduled self-checks.
 */
export async function startChangeWorker(app: App, opts: ChangeWorkerOptions = {}): Promise<ChangeWorker> {
  const redis = app.redis;
  if (!redis) throw new TypeError('startChangeWorker needs an app with Redis (createApp gates: "redis")');
  const { log, prefix } = app;
  checkSecrets(endpointsOf(app.config), app.env);
  const stopping = new AbortController();
  const p: ChangeWorkerParts = {
    app,
    redis,
    graceMs: opts.graceMs ?? 5000,
    clock: opts.clock ?? wallClock,
    stopping: stopping.signal,
  };
  const agent = opts.sender ? null : new Agent({ connections: 8, keepAliveTimeout: 10_000 });
  const metrics = app.metrics
    ? registerChangeMetrics(app.metrics.registry, { lastChecks: () => app.changes.lastChecks() })
    : null;
  const webhooks = openWebhookQueue(redis, prefix, warnUnlessRedisDown(log, 'queue error'));
  const checks = openCheckQueue(redis, prefix, warnUnlessRedisDown(log, 'queue error'));
  const dispatch = dispatching(app, webhookBatchQueue(webhooks, opts.attempts), opts.pollMs ?? DISPATCH_POLL_MS);
  const schedules = reconcilingChecks(app, checks);
  const deliveries = deliveryWorker(
    p,
    {
      endpoints: () => endpointsOf(app.config),
      env: () => app.env,
      changes: app.changes,
      sender: opts.sender ?? httpWebhookSender(agent as Agent),
      log,
      ...(metrics ? { onAttempt: (e) => metrics.webhookAttempt(e) } : {}),
    },
    opts.backoff ?? webhookRetryDelay,
    [schedules.task, dispatch.task, pruning(app, opts.pruneEveryMs ?? PRUNE_EVERY_MS)],
  );
  deliveries.worker.on('completed', dispatch.nudge);
  deliveries.worker.on('failed', dispatch.nudge);
  const checker = checkWorker(p);
  app.onReload(onReloadOf(schedules.reconcile, dispatch.nudge, log));
  // Stop making batches first (the deliveries' close stops the periodic work), let deliveries and checks in flight
  // end, then close the rest.
  const steps: CloseStep[] = [
    () => deliveries.close(),
    () => dispatch.settled(),
    () => checker.close(),
    () => webhooks.close(),
    () => checks.close(),
    ...(agent ? [() => agent.close()] : []),
  ];
  const close = closeOnce(async () => {
    stopping.abort();
    await closeAll(steps, 'the change worker');
  });
  return { queues: [webhooks, checks], dispatch: dispatch.dispatch, close, [Symbol.asyncDispose]: close };
}
