import type { Queue } from 'bullmq';
import { startWorkerOps as startOps, type WorkerOps } from '../ops/worker-ops.js';
import type { App } from './create-app.js';

export interface WorkerOpsOptions {
  /** Serve `/healthz`, `/readyz`, `/metrics` and `/queues` on this port; absent: no server (SIGHUP still works). */
  readonly port?: number;
  /** Interface to listen on; default 127.0.0.1. */
  readonly host?: string;
  /** The config file SIGHUP re-reads. */
  readonly configPath: string;
  /** Queues for the dashboard and the depth metrics. */
  readonly queues: readonly Queue[];
}

/**
 * Starts the operational side of `understudy worker` on the app: SIGHUP re-reads the config into `app.reload`
 * (the one reload path), readiness pings the app's Redis and reads migrations over its one SQLite connection.
 */
export async function startWorkerOps(app: App, opts: WorkerOpsOptions): Promise<WorkerOps> {
  if (!app.redis || !app.metrics) throw new TypeError('startWorkerOps needs an app with Redis gates and metrics');
  return startOps({
    ...(opts.port !== undefined ? { port: opts.port } : {}),
    ...(opts.host !== undefined ? { host: opts.host } : {}),
    configPath: opts.configPath,
    config: app.config,
    health: app.health,
    worker: { queues: opts.queues, redis: app.redis, reload: (c, e) => app.reload(c, e) },
    metrics: app.metrics,
    log: app.log,
  });
}
