import type { Config } from '../config/config-schema.js';
import type { Logger } from '../log.js';
import { effectiveEnv } from '../ops/config-reload.js';
import { createOpsMetrics } from '../ops/metrics.js';
import { createApp } from './create-app.js';
import { startChangeWorker } from './start-change-worker.js';
import { startSyncWorker } from './start-sync-worker.js';
import { startWatch } from './start-watch.js';
import { startWorkerOps } from './start-worker-ops.js';
import { startWriteWorker } from './start-write-worker.js';

export interface WorkerProcessOptions {
  /** The config file SIGHUP re-reads (its contents already loaded: `config`). */
  readonly configPath: string;
  readonly log: Logger;
  /** Aborts when the process should stop (SIGTERM, SIGINT): everything drains and closes, then this returns. */
  readonly signal: AbortSignal;
  /** Sync jobs at once in this process (default config `worker.concurrency`, else 2). */
  readonly concurrency?: number;
  /** Serve `/healthz`, `/readyz`, `/metrics` and `/queues` on this port (and host); absent: no server. */
  readonly http?: { readonly port: number; readonly host?: string };
}

/** What a stopped worker process leaves its command to do. */
export interface WorkerProcessEnd {
  /** Redis was unreachable when the stop came: BullMQ leaves a timer waiting, so the process should exit now. */
  readonly redisGoneAtStop: boolean;
}

/** Whether Redis was unreachable when the stop came (its connection then ends at once: src/queue/redis-at-stop.ts). */
function redisGoneAtStop(redis: { readonly status: string } | null, stop: AbortSignal): () => boolean {
  let gone = false;
  const look = () => {
    gone = redis !== null && redis.status !== 'ready';
  };
  if (stop.aborted) look();
  else stop.addEventListener('abort', look, { once: true });
  return () => gone;
}

/**
 * `understudy worker`: the app (profile `worker`) with its sync, watch, write and change workers and its ops
 * server, until `signal` aborts; then each closes in reverse: ops, changes, writes (in-flight writes finish),
 * watch, syncs, then the app (gates, pool, the mirror, Redis).
 */
export async function runWorkerProcess(
  config: Config,
  env: NodeJS.ProcessEnv,
  opts: WorkerProcessOptions,
): Promise<WorkerProcessEnd> {
  const { log, signal } = opts;
  let redisGone = () => false;
  {
    await using app = await createApp(config, effectiveEnv(env), {
      profile: 'worker',
      log,
      signal,
      metrics: createOpsMetrics(),
    });
    redisGone = redisGoneAtStop(app.redis, signal);
    await using sync = startSyncWorker(app, opts.concurrency ? { concurrency: opts.concurrency } : {});
    // The watched tenants kept live (config `watch`); stopped before the syncs on shutdown.
    await using _watch = startWatch(app, { signal });
    await using writes = await startWriteWorker(app);
    // Webhooks, pruning of the change log and scheduled self-checks (docs/changes.md).
    await using changes = await startChangeWorker(app);
    // On SIGTERM writes drain alongside the syncs, so both fit in the 10 s budget (disposal awaits the same close).
    signal.addEventListener('abort', () => void writes.close().catch(() => undefined), { once: true });
    await using _ops = await startWorkerOps(app, {
      ...(opts.http ? { port: opts.http.port } : {}),
      ...(opts.http?.host !== undefined ? { host: opts.http.host } : {}),
      configPath: opts.configPath,
      queues: [sync.queue, writes.queue, ...changes.queues],
    });
    await sync.run(signal);
  }
  return { redisGoneAtStop: redisGone() };
}
