import type { Queue } from 'bullmq';
import { closeOnce } from '../close-all.js';
import type { Config } from '../config/config-schema.js';
import { ConfigError } from '../errors.js';
import type { Logger } from '../log.js';
import { MIGRATION_NAMES } from '../store/migrate.js';
import { fileMirrorHealth, type MirrorHealth } from '../store/mirror-health.js';
import { type ReloadTarget, type SighupWatcher, watchSighup } from './config-reload.js';
import {
  DASHBOARD_SESSION_HOURS_ENV,
  DASHBOARD_TOKEN_ENV,
  DEFAULT_DASHBOARD_SESSION_MS,
  type OpsServer,
  startOpsServer,
} from './http-server.js';
import type { LastSuccess, OpsMetrics } from './metrics.js';
import { databaseCheck, type PingableRedis, redisCheck, runChecks } from './readiness.js';

/** What the ops side needs from a running worker. */
export interface OpsWorker extends ReloadTarget {
  /** Queues for the dashboard and the depth metrics. */
  readonly queues: readonly Queue[];
  /** The worker's command connection, pinged by `/readyz`. */
  readonly redis: PingableRedis;
}

export interface WorkerOpsOptions {
  /** Serve the HTTP endpoints on this port; absent: no server (SIGHUP reload still works). */
  readonly port?: number;
  /** Interface to listen on; default 127.0.0.1. */
  readonly host?: string;
  readonly configPath: string;
  readonly config: Config;
  /** The mirror's migrations and last successes, read over the process' own connection. */
  readonly health: MirrorHealth;
  /** Migrations `/readyz` requires; default: every migration this build knows. */
  readonly expectedMigrations?: readonly string[];
  readonly worker: OpsWorker;
  readonly metrics: OpsMetrics;
  readonly log: Logger;
  /** For the dashboard token; default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** Per readiness check (default 1500 ms). */
  readonly checkTimeoutMs?: number;
}

export interface WorkerOps extends AsyncDisposable {
  readonly server: OpsServer | null;
  readonly sighup: SighupWatcher;
  close(): Promise<void>;
}

/** The migrations applied in a database, by name (empty when it has none); a read-only connection of its own. */
export const appliedMigrations = (path: string): Promise<string[]> => fileMirrorHealth(path).appliedMigrations();

/** The last successful sync of each tenant and collection recorded in the mirror at `path` (its own connection). */
export const readLastSuccesses = (path: string): Promise<LastSuccess[]> => fileMirrorHealth(path).lastSuccesses();

/** The dashboard session length from `UNDERSTUDY_DASHBOARD_SESSION_HOURS` (default 12 h); throws on a bad value. */
export function dashboardSessionMs(env: NodeJS.ProcessEnv): number {
  const raw = env[DASHBOARD_SESSION_HOURS_ENV];
  if (raw === undefined || raw === '') return DEFAULT_DASHBOARD_SESSION_MS;
  const hours = Number(raw);
  if (!Number.isFinite(hours) || hours <= 0 || hours > 24 * 366)
    throw new ConfigError(`${DASHBOARD_SESSION_HOURS_ENV} must be a number of hours > 0, not ${JSON.stringify(raw)}`);
  return Math.round(hours * 3600 * 1000);
}

/**
 * Everything operational around a worker: the SIGHUP config reload, queue depths in the metrics and, with a
 * port, the `/healthz`, `/readyz`, `/metrics` and `/queues` endpoints. Call after the worker has opened its
 * database (migrations applied).
 */
export async function startWorkerOps(opts: WorkerOpsOptions): Promise<WorkerOps> {
  const { worker, metrics, log } = opts;
  const env = opts.env ?? process.env;
  metrics.watchQueues(worker.queues);
  metrics.readLastSuccesses(() => opts.health.lastSuccesses());
  const sighup = watchSighup({ configPath: opts.configPath, initial: opts.config, target: worker, log });
  let server: OpsServer | null = null;
  if (opts.port !== undefined) {
    const expected = opts.expectedMigrations ?? MIGRATION_NAMES;
    const checks = { redis: redisCheck(worker.redis), database: databaseCheck(opts.health, expected) };
    const token = env[DASHBOARD_TOKEN_ENV];
    const sessionMs = dashboardSessionMs(env);
    try {
      server = await startOpsServer({
        port: opts.port,
        ...(opts.host ? { host: opts.host } : {}),
        metrics,
        ready: () => runChecks(checks, opts.checkTimeoutMs),
        queues: worker.queues,
        ...(token ? { dashboardToken: token } : {}),
        sessionMs,
        log,
      });
    } catch (err) {
      await sighup.close();
      throw err;
    }
    log.info({ host: server.host, port: server.port, dashboard: token ? '/queues' : 'off' }, 'ops endpoints listening');
  }
  const close = closeOnce(async () => {
    await sighup.close();
    await server?.close();
  });
  return { server, sighup, close, [Symbol.asyncDispose]: close };
}
