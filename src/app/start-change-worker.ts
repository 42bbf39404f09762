import { type Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { Agent } from 'undici';
import { type DeliverDeps, deliverWebhookProcessor } from '../../jobs/deliver-webhook.js';
import { runCheckProcessor } from '../../jobs/run-check.js';
import type { WebhookSender } from '../changes/deliver-webhook.js';
import { dispatchWebhooks } from '../changes/dispatch-webhooks.js';
import { httpWebhookSender } from '../changes/http-webhook-sender.js';
import { webhookRetryDelay } from '../changes/retry-schedule.js';
import type { WebhookBatch } from '../changes/webhook-batch.js';
import { checkSecrets, endpointsOf } from '../changes/webhook-endpoints.js';
import { type CloseStep, closeAll } from '../close-all.js';
import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import { registerChangeMetrics } from '../ops/change-metrics.js';
import { CHECKS_QUEUE, type CheckQueue, openCheckQueue, reconcileCheckSchedules } from '../queue/check-schedules.js';
import { closeWorker, type JobsInFlight, jobsInFlight, redisGoneWhenClosing } from '../queue/close-worker.js';
import { warnUnlessRedisDown } from '../queue/error-listeners.js';
import { isRedisConnectionError } from '../queue/redis-settings.js';
import { openWebhookQueue, WEBHOOKS_QUEUE, type WebhookQueue, webhookBatchQueue } from '../queue/webhook-queue.js';
import { checkTenant, type TenantCheck } from '../sync/self-check.js';
import type { App } from './create-app.js';

export interface ChangeWorkerOptions {
  /** The wait before retry n of a batch (default: src/changes/retry-schedule.ts; tests scale it down). */
  readonly backoff?: (retry: number) => number;
  /** Attempts per batch (default 18, over 24 h). */
  readonly attempts?: number;
  /** How often the log's end is looked at for new changes (default 200 ms). */
  readonly pollMs?: number;
  /** How often old changes are pruned (default hourly; the first prune a minute after start). */
  readonly pruneEveryMs?: number;
  /** How long shutdown lets deliveries in flight finish before cutting them (default 5000 ms). */
  readonly graceMs?: number;
  /** Sends deliveries (default: undici, on an agent of its own). */
  readonly sender?: WebhookSender;
}

export interface ChangeWorker extends AsyncDisposable {
  readonly queues: readonly [WebhookQueue, CheckQueue];
  /** Hands each endpoint its next batch now (also done on its own as changes commit). */
  dispatch(): Promise<void>;
  /** Stops dispatching, pruning and checking; lets deliveries in flight finish. Idempotent. */
  close(): Promise<void>;
}

const DAY_MS = 86_400_000;
/** Scheduled checks of one tenant run at most this often, whatever `checkCron` says (each costs reads). */
export const MIN_CHECK_INTERVAL_MS = 60_000;

/** Dispatch: when the log's end moves, when a delivery of this process ends (`nudge`), every 2 s for others'. */
function startDispatching(app: App, batches: ReturnType<typeof webhookBatchQueue>, pollMs: number) {
  const { log } = app;
  let seen = -1;
  let dirty = true;
  let lastFull = 0;
  let running: Promise<void> | null = null;
  const dispatch = (): Promise<void> => {
    running ??= (async () => {
      try {
        const end = await app.changes.lastSeq();
        if (end === seen && !dirty && Date.now() - lastFull < 2000) return;
        seen = end;
        dirty = false;
        lastFull = Date.now();
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
    dirty = true;
    void dispatch(); // its failures are logged inside
  };
  const poll = setInterval(() => void dispatch(), pollMs); // failures logged inside dispatch
  poll.unref();
  const stop = async () => {
    clearInterval(poll);
    await running;
  };
  return { dispatch, nudge, stop };
}

/** Prunes changes older than `changes.retainDays` (default 30): a minute after start, then every `everyMs`. */
function startPruning(app: App, everyMs: number): CloseStep {
  const prune = async () => {
    try {
      const before = new Date(Date.now() - (app.config.changes?.retainDays ?? 30) * DAY_MS).toISOString();
      const n = await app.changes.prune(before);
      if (n > 0) app.log.info({ pruned: n, before }, 'change log pruned');
    } catch (err) {
      app.log.warn({ err: describeError(err) }, 'change log prune failed; trying again next time');
    }
  };
  const firstPrune = setTimeout(() => void prune(), 60_000); // prune logs its own failures
  const pruning = setInterval(() => void prune(), everyMs);
  firstPrune.unref();
  pruning.unref();
  return async () => {
    clearTimeout(firstPrune);
    clearInterval(pruning);
  };
}

/**
 * The scheduled self-check of one tenant: counts only (`check --counts`), a read per collection and variant of the
 * key's budget, one check a minute per tenant at most. Comparing ids costs a read per page: `understudy check`.
 */
const checkTenantOf =
  (app: App, stopping: AbortSignal) =>
  async (slug: string, signal: AbortSignal): Promise<TenantCheck | 'recent' | null> => {
    const t = app.tenant(slug);
    if (!t) return null;
    const last = (await app.changes.lastChecks())
      .filter((c) => c.tenant === slug)
      .reduce((m, c) => Math.max(m, Date.parse(c.checkedAt)), 0);
    if (Date.now() - last < MIN_CHECK_INTERVAL_MS) return 'recent';
    const routes = await app.routesOf(slug, signal);
    const s = AbortSignal.any([signal, stopping]);
    return checkTenant(
      { client: t.client, store: app.store, checks: app.changes, signal: s, countsOnly: true },
      t.target,
      routes,
    );
  };

/** The BullMQ worker delivering webhook batches (many at once), on the sender's own HTTP agent. */
function deliveryWorker(
  app: App,
  redis: Redis,
  deps: DeliverDeps,
  backoff: (retry: number) => number,
  jobs: JobsInFlight,
) {
  return new Worker<WebhookBatch>(WEBHOOKS_QUEUE, jobs.track(deliverWebhookProcessor(deps)), {
    connection: redis,
    prefix: app.prefix,
    concurrency: Math.max(32, endpointsOf(app.config).length),
    settings: { backoffStrategy: (attemptsMade: number) => backoff(attemptsMade) },
  });
}

/** The BullMQ worker running scheduled self-checks, one at a time. */
function checkWorker(app: App, redis: Redis, stopping: AbortSignal, jobs: JobsInFlight): Worker {
  const runCheck = runCheckProcessor({ log: app.log, checkTenant: checkTenantOf(app, stopping) });
  const checker = new Worker(CHECKS_QUEUE, jobs.track(runCheck as (job: Job) => Promise<unknown>), {
    connection: redis,
    prefix: app.prefix,
    concurrency: 1,
  });
  checker.on('error', warnUnlessRedisDown(app.log, 'check worker error'));
  return checker;
}

/** Check schedules follow the config: at start (not awaited: Redis may be down), every 5 minutes and on reload. */
function reconcilingChecks(app: App, checks: CheckQueue): { reconcile(): Promise<void>; stop: CloseStep } {
  const reconcile = () =>
    reconcileCheckSchedules(checks, app.config.tenants, app.log).catch((err) => {
      if (!isRedisConnectionError(err)) app.log.warn({ reason: describeError(err) }, 'check schedules not reconciled');
    });
  // Again every 5 minutes, so schedules come back after Redis lost its data.
  void reconcile(); // failures are logged inside
  const reconciling = setInterval(() => void reconcile(), 5 * 60_000); // failures are logged inside
  reconciling.unref();
  return { reconcile, stop: async () => clearInterval(reconciling) };
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
  const graceMs = opts.graceMs ?? 5000;
  const agent = opts.sender ? null : new Agent({ connections: 8, keepAliveTimeout: 10_000 });
  const metrics = app.metrics
    ? registerChangeMetrics(app.metrics.registry, { lastChecks: () => app.changes.lastChecks() })
    : null;
  const webhooks = openWebhookQueue(redis, prefix, warnUnlessRedisDown(log, 'queue error'));
  const checks = openCheckQueue(redis, prefix, warnUnlessRedisDown(log, 'queue error'));
  const dispatching = startDispatching(app, webhookBatchQueue(webhooks, opts.attempts), opts.pollMs ?? 200);
  // At shutdown, deliveries in flight get a few seconds to end, then are cut (each is tried again later).
  const cut = new AbortController();
  const deliverDeps: DeliverDeps = {
    stop: cut.signal,
    endpoints: () => endpointsOf(app.config),
    env: () => app.env,
    changes: app.changes,
    sender: opts.sender ?? httpWebhookSender(agent as Agent),
    log,
    ...(metrics ? { onAttempt: (e) => metrics.webhookAttempt(e) } : {}),
  };
  // With Redis gone at close, each worker's close waits for its own jobs rather than for BullMQ (closeWorker).
  const redisGone = redisGoneWhenClosing(app.stopping, stopping.signal, redis);
  const delivering = jobsInFlight(redisGone);
  const checking = jobsInFlight(redisGone);
  const deliveries = deliveryWorker(app, redis, deliverDeps, opts.backoff ?? webhookRetryDelay, delivering);
  deliveries.on('error', warnUnlessRedisDown(log, 'webhook worker error'));
  deliveries.on('completed', dispatching.nudge);
  deliveries.on('failed', dispatching.nudge);
  const checker = checkWorker(app, redis, stopping.signal, checking);
  const schedules = reconcilingChecks(app, checks);
  app.onReload(onReloadOf(schedules.reconcile, dispatching.nudge, log));
  // Stop making batches first, then let deliveries and checks in flight end, then close the rest.
  const steps: CloseStep[] = [
    schedules.stop,
    dispatching.stop,
    startPruning(app, opts.pruneEveryMs ?? 3_600_000),
    () => closeWorker(deliveries, { jobs: delivering, redisGone, boundMs: graceMs + 1000 }),
    () => closeWorker(checker, { jobs: checking, redisGone, boundMs: graceMs + 1000 }),
    () => webhooks.close(),
    () => checks.close(),
    ...(agent ? [() => agent.close()] : []),
  ];
  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      stopping.abort();
      const grace = setTimeout(() => cut.abort(), graceMs);
      grace.unref();
      await closeAll(steps, 'the change worker');
    })();
    return closing;
  };
  return { queues: [webhooks, checks], dispatch: dispatching.dispatch, close, [Symbol.asyncDispose]: close };
}
