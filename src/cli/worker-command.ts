import { createApp } from '../app/create-app.js';
import { startChangeWorker } from '../app/start-change-worker.js';
import { startSyncWorker } from '../app/start-sync-worker.js';
import { startWatch } from '../app/start-watch.js';
import { startWorkerOps } from '../app/start-worker-ops.js';
import { startWriteWorker } from '../app/start-write-worker.js';
import { loadConfigFile } from '../config/load-config.js';
import { UsageError } from '../errors.js';
import { createLogger } from '../log.js';
import { effectiveEnv } from '../ops/config-reload.js';
import { createOpsMetrics } from '../ops/metrics.js';
import { printHelp } from './command-help.js';
import { keepGoingOnRejections } from './keep-going.js';
import { parseFlags } from './parse-flags.js';
import { WORKER_SPEC } from './specs/worker-spec.js';

type WorkerValues = ReturnType<typeof parseFlags<(typeof WORKER_SPEC)['flags']>>['values'];

/** `--concurrency` (returned; the parser checked it, `--http` and that `--http-host` comes with it): a host named. */
function checkedFlags(values: WorkerValues): number | undefined {
  if (values['http-host'] === '') throw new UsageError('--http-host needs --http PORT and a host name or address');
  return values.concurrency;
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

export async function workerCommand(argv: string[]): Promise<number> {
  const { values, help } = parseFlags(argv, WORKER_SPEC);
  if (help) return printHelp(WORKER_SPEC, help);
  const concurrency = checkedFlags(values);
  const config = loadConfigFile(values.config);
  const log = createLogger();
  const stop = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    log.info({ signal: sig }, 'shutdown requested');
    stop.abort(sig);
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  keepGoingOnRejections(log, stop.signal, 'the worker');
  let redisGone = () => false;
  try {
    // Disposed in reverse: ops, writes (in-flight writes finish), syncs, then the app (gates, pool, SQLite, Redis).
    await using app = await createApp(config, effectiveEnv(process.env), {
      profile: 'worker',
      log,
      signal: stop.signal,
      metrics: createOpsMetrics(),
    });
    redisGone = redisGoneAtStop(app.redis, stop.signal);
    await using sync = startSyncWorker(app, concurrency ? { concurrency } : {});
    // The watched tenants kept live (config `watch`); stopped before the syncs on shutdown.
    await using _watch = startWatch(app, { signal: stop.signal });
    await using writes = await startWriteWorker(app);
    // Webhooks, pruning of the change log and scheduled self-checks (docs/changes.md).
    await using changes = await startChangeWorker(app);
    // On SIGTERM writes drain alongside the syncs, so both fit in the 10 s budget (disposal awaits the same close).
    stop.signal.addEventListener('abort', () => void writes.close().catch(() => undefined), { once: true });
    await using _ops = await startWorkerOps(app, {
      ...(values.http !== undefined ? { port: values.http } : {}),
      ...(values['http-host'] !== undefined ? { host: values['http-host'] } : {}),
      configPath: values.config,
      queues: [sync.queue, writes.queue, ...changes.queues],
    });
    await sync.run(stop.signal);
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
  log.flush();
  // With Redis gone at stop, BullMQ's stalled checker is left waiting out a timer (5 s after its command failed,
  // then its interval) though everything is closed: exit once this returns, not at the CLI's 3 s fallback.
  if (redisGone()) setImmediate(() => process.exit(0));
  return 0;
}
