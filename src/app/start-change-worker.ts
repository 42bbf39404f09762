import { type Job, Worker } from 'bullmq';
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
import { registerChangeMetrics } from '../ops/change-metrics.js';
import { CHECKS_QUEUE, type CheckQueue, openCheckQueue, reconcileCheckSchedules } from '../queue/check-schedules.js';
import { closeWorker } from '../queue/close-worker.js';
import { isRedisConnectionError } from '../queue/redis-settings.js';
import { openWebhookQueue, WEBHOOKS_QUEUE, type WebhookQueue, webhookBatchQueue } from '../queue/webhook-queue.js';
import { checkTenant } from '../sync/self-check.js';
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
  const steps: CloseStep[] = [];
  const stopping = new AbortController();
  const agent = opts.sender ? null : new Agent({ connections: 8, keepAliveTimeout: 10_000 });
  const sender = opts.sender ?? httpWebhookSender(agent as Agent);
  const metrics = app.metrics
    ? registerChangeMetrics(app.metrics.registry, { lastChecks: () => app.changes.lastChecks() })
    : null;

  const webhooks = openWebhookQueue(redis, prefix);
  const checks = openCheckQueue(redis, prefix);
  // A connection error is the outage the app's connection already reports, once per back-off: not again here.
  const quiet = (what: string) => (err: Error) => {
    if (!isRedisConnectionError(err)) log.warn({ reason: err.message }, what);
  };
  for (const q of [webhooks, checks]) q.on('error', quiet('queue error'));
  const batches = webhookBatchQueue(webhooks, opts.attempts);

  // Dispatch: when the log's end moves, when a delivery of this process ends, and every 2 s for other processes'.
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
  const poll = setInterval(() => void dispatch(), opts.pollMs ?? 200); // failures logged inside dispatch
  poll.unref();
  steps.push(async () => {
    clearInterval(poll);
    await running;
  });

  const retainDays = () => app.config.changes?.retainDays ?? 30;
  const prune = async () => {
    try {
      const before = new Date(Date.now() - retainDays() * DAY_MS).toISOString();
      const n = await app.changes.prune(before);
      if (n > 0) log.info({ pruned: n, before }, 'change log pruned');
    } catch (err) {
      log.warn({ err: describeError(err) }, 'change log prune failed; trying again next time');
    }
  };
  const firstPrune = setTimeout(() => void prune(), 60_000); // prune logs its own failures
  const pruning = setInterval(() => void prune(), opts.pruneEveryMs ?? 3_600_000);
  firstPrune.unref();
  pruning.unref();
  steps.push(async () => {
    clearTimeout(firstPrune);
    clearInterval(pruning);
  });

  // At shutdown, deliveries in flight get a few seconds to end, then are cut (each is tried again later).
  const cut = new AbortController();
  const deliverDeps: DeliverDeps = {
    stop: cut.signal,
    endpoints: () => endpointsOf(app.config),
    env: () => app.env,
    changes: app.changes,
    sender,
    log,
    ...(metrics ? { onAttempt: (e) => metrics.webhookAttempt(e) } : {}),
  };
  const backoff = opts.backoff ?? webhookRetryDelay;
  const deliveries = new Worker<WebhookBatch>(WEBHOOKS_QUEUE, deliverWebhookProcessor(deliverDeps), {
    connection: redis,
    prefix,
    concurrency: Math.max(32, endpointsOf(app.config).length),
    settings: { backoffStrategy: (attemptsMade: number) => backoff(attemptsMade) },
  });
  deliveries.on('error', quiet('webhook worker error'));
  deliveries.on('completed', nudge);
  deliveries.on('failed', nudge);
  steps.push(() => closeWorker(deliveries));

  const checker = new Worker(
    CHECKS_QUEUE,
    runCheckProcessor({
      log,
      checkTenant: async (slug, signal) => {
        const t = app.tenant(slug);
        if (!t) return null;
        // A scheduled check compares counts only (`check --counts`): a read per collection and variant of the key's
        // budget, one check a minute per tenant at most. Comparing ids costs a read per page: `understudy check`.
        const last = (await app.changes.lastChecks())
          .filter((c) => c.tenant === slug)
          .reduce((m, c) => Math.max(m, Date.parse(c.checkedAt)), 0);
        if (Date.now() - last < MIN_CHECK_INTERVAL_MS) return 'recent';
        const routes = await app.routesOf(slug, signal);
        const s = AbortSignal.any([signal, stopping.signal]);
        return checkTenant(
          { client: t.client, store: app.store, checks: app.changes, signal: s, countsOnly: true },
          t.target,
          routes,
        );
      },
    }) as (job: Job) => Promise<unknown>,
    { connection: redis, prefix, concurrency: 1 },
  );
  checker.on('error', quiet('check worker error'));
  steps.push(() => closeWorker(checker));
  steps.push(() => webhooks.close());
  steps.push(() => checks.close());
  if (agent) steps.push(() => agent.close());

  const reconcile = () =>
    reconcileCheckSchedules(checks, app.config.tenants, log).catch((err) => {
      if (!isRedisConnectionError(err)) log.warn({ reason: describeError(err) }, 'check schedules not reconciled');
    });
  // Not awaited: Redis may be down at start, and the worker must still start (and stop on a signal) meanwhile.
  // Again every 5 minutes, so schedules come back after Redis lost its data.
  void reconcile(); // failures are logged inside
  const reconciling = setInterval(() => void reconcile(), 5 * 60_000); // failures are logged inside
  reconciling.unref();
  steps.unshift(() => clearInterval(reconciling));
  app.onReload(async (a) => {
    try {
      checkSecrets(endpointsOf(a.config), a.env);
    } catch (err) {
      log.error({ err: describeError(err) }, 'webhook secrets after reload');
    }
    await reconcile();
    nudge();
  });

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      stopping.abort();
      const grace = setTimeout(() => cut.abort(), opts.graceMs ?? 5000);
      grace.unref();
      // Stop making batches first, then let deliveries and checks in flight end, then close the rest.
      await closeAll(steps, 'the change worker');
    })();
    return closing;
  };
  return { queues: [webhooks, checks], dispatch, close, [Symbol.asyncDispose]: close };
}
