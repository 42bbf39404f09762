import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { expect, onTestFinished, vi } from 'vitest';
import { createApp } from '../../src/app/create-app.js';
import { enqueueSync } from '../../src/app/enqueue-sync.js';
import { type SyncWorkerOptions, startSyncWorker } from '../../src/app/start-sync-worker.js';
import type { Config } from '../../src/config/config-schema.js';
import type { Logger } from '../../src/log.js';
import type { OpsMetrics } from '../../src/ops/metrics.js';
import { errorsFailTheCalls } from '../../src/queue/error-listeners.js';
import { openSyncQueue, type SyncQueue } from '../../src/queue/queues.js';
import { type SimulatorOptions, startSimulator } from '../../src/sim/start-simulator.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/sync-harness.js';
import { startWorker } from '../helpers/understudy-process.js';

export { tempDir };

/**
 * A simulator, a config file naming its first tenant (key in W_KEY), a fresh Redis prefix, and a queue to watch;
 * `worker(...args)` starts `understudy worker` on that config. Worker timing is short (2 s locks) so a killed
 * worker's job is recovered quickly.
 */
export async function workerHarness(
  redisUrl: string,
  simOpts: SimulatorOptions = {},
  tuning: Record<string, number> = {},
) {
  const sim = await startSimulator({ port: 0, readLimit: 0, writeLimit: 0, records: 12, maxLimit: 5, ...simOpts });
  onTestFinished(() => sim.close());
  const t = sim.tenants[0];
  if (!t) throw new Error('simulator has no tenant');
  const dir = tempDir();
  const db = join(dir, 'mirror.db');
  const prefix = `t-${randomUUID()}`;
  const config = {
    baseUrl: sim.url,
    database: db,
    redis: { prefix },
    worker: { lockDurationMs: 2000, stalledIntervalMs: 1000, backoffMs: 100, concurrency: 2, ...tuning },
    tenants: [{ slug: t.slug, apiKeyEnv: 'W_KEY' }],
  };
  const configPath = join(dir, 'config.json');
  writeFileSync(configPath, JSON.stringify(config));
  const env = { W_KEY: t.key, REDIS_URL: redisUrl, LOG_LEVEL: 'info' };
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  redis.on('error', () => {});
  const queue: SyncQueue = openSyncQueue(redis, prefix, errorsFailTheCalls);
  onTestFinished(async () => {
    await queue.close().catch(() => {});
    redis.disconnect();
  });
  /** Live rows of a table, read the way a person with sqlite3 would; throws while the file does not exist. */
  const rows = (table: string): number => {
    const d = new Database(db, { readonly: true, fileMustExist: true });
    try {
      return (d.prepare(`SELECT count(*) AS n FROM ${table} WHERE deleted_at IS NULL`).get() as { n: number }).n;
    } finally {
      d.close();
    }
  };
  const state = async (jobId: string) => (await queue.getJob(jobId))?.getState();
  const worker = (...args: string[]) => startWorker(configPath, args, env);
  /** Queues a full sync of event-instances; resolves with its job id once `atLeast` of its rows are mirrored. */
  const syncUnderway = async (atLeast: number): Promise<string> => {
    const jobId = await enqueueSync({
      redisUrl,
      prefix,
      tenant: t.slug,
      collections: ['event-instances'],
      mode: 'full',
    });
    await vi.waitFor(() => expect(rows('event_instances')).toBeGreaterThanOrEqual(atLeast), {
      timeout: 30_000,
      interval: 20,
    });
    return jobId;
  };
  /** `understudy enqueue --config <its config> …args`, as an app would run it; returns the job id (exit 0 asserted). */
  const enqueue = async (...args: string[]): Promise<string> => {
    const r = await runCli(['enqueue', '--config', configPath, ...args], { env });
    expect(r.code, r.stderr).toBe(0);
    return r.stdout.trim().split('\n').pop() as string;
  };
  return { sim, tenant: t, db, prefix, config, configPath, env, queue, rows, state, worker, syncUnderway, enqueue };
}

/**
 * The sync side of `understudy worker`, wired as the command wires it: `createApp` (profile `worker`), then
 * `startSyncWorker` on it. `close()` closes the worker, then the app.
 */
export async function syncWorker(
  config: Config,
  opts: SyncWorkerOptions & { readonly log: Logger; readonly env: NodeJS.ProcessEnv; readonly metrics?: OpsMetrics },
) {
  const { log, env, metrics, ...tuning } = opts;
  const app = await createApp(config, env, { profile: 'worker', log, ...(metrics ? { metrics } : {}) });
  const sync = startSyncWorker(app, tuning);
  return {
    app,
    run: (signal: AbortSignal) => sync.run(signal),
    close: async () => {
      await sync.close();
      await app.close();
    },
  };
}
