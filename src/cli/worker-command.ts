import { createWorkerApp } from '../app/start-sync-worker.js';
import { startConfiguredWriteWorker } from '../app/start-write-worker.js';
import { databasePath } from '../config/database-path.js';
import { loadConfigFile } from '../config/load-config.js';
import { UsageError } from '../errors.js';
import { createLogger } from '../log.js';
import { effectiveEnv } from '../ops/config-reload.js';
import { instrumentGate } from '../ops/instrument-gate.js';
import { instrumentWriteWorker } from '../ops/instrument-writes.js';
import { createOpsMetrics } from '../ops/metrics.js';
import { startWorkerOps } from '../ops/worker-ops.js';
import { parseFlags } from './parse-flags.js';

const HELP = `usage: understudy worker --config FILE [--concurrency N] [--http PORT] [--http-host HOST]

Runs sync workers on the Redis queue (REDIS_URL, else config redis.url, else redis://127.0.0.1:6379): the
schedules of the config fire once per tick however many workers run, and jobs added by
\`understudy sync --enqueue\` are processed. SIGTERM or SIGINT: stop taking jobs, let each active sync commit
its page, close everything and exit 0.

  --config FILE       JSON config (tenants, schedule, redis, worker)
  --concurrency N     jobs run at once in this process (default: config worker.concurrency, else 2)
  --http PORT         serve /healthz, /readyz, /metrics and the queue dashboard /queues on PORT
                      (off by default; the dashboard needs UNDERSTUDY_DASHBOARD_TOKEN)
  --http-host HOST    interface --http listens on (default 127.0.0.1: this host only; 0.0.0.0 for all)

SIGHUP re-reads the config and the keys (the environment, plus the file UNDERSTUDY_ENV_FILE names): new
tenants, schedules and rotated keys take effect without a restart. See docs/operations.md.
`;

const FLAGS = {
  config: { type: 'string' },
  concurrency: { type: 'string' },
  http: { type: 'string' },
  'http-host': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function workerCommand(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, FLAGS);
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (!values.config) throw new UsageError('--config FILE is required');
  let concurrency: number | undefined;
  if (values.concurrency !== undefined) {
    concurrency = Number(values.concurrency);
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new UsageError('--concurrency must be an integer >= 1');
  }
  if (values.http !== undefined && !/^\d+$/.test(values.http)) throw new UsageError('--http must be a port number');
  if (values['http-host'] !== undefined && (values.http === undefined || values['http-host'] === ''))
    throw new UsageError('--http-host needs --http PORT and a host name or address');
  const config = loadConfigFile(values.config);
  const log = createLogger();
  const env = effectiveEnv(process.env);
  const metrics = createOpsMetrics();

  const stop = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    log.info({ signal: sig }, 'shutdown requested');
    stop.abort(sig);
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    await using app = await createWorkerApp(config, { log, env, metrics, ...(concurrency ? { concurrency } : {}) });
    // Writes (issue 5) drain in the same process; disposed first, so in-flight writes finish before sync closes.
    await using _writes = await startConfiguredWriteWorker(config, {
      log,
      env,
      onRequest: metrics.upstreamRequest,
      wrapGate: (gate) => instrumentGate(gate, metrics),
    });
    instrumentWriteWorker(_writes.writes.worker, metrics);
    // On SIGTERM, writes drain at the same time as syncs rather than after them, so both fit in the 10 s budget.
    // Not awaited here: disposal below awaits the same (memoized) close.
    const drainWrites = () => void _writes.close().catch((err: unknown) => log.warn({ err }, 'closing writes failed'));
    stop.signal.addEventListener('abort', drainWrites, { once: true });
    // Operations (issue 6): SIGHUP reload, and the HTTP endpoints with --http; closed before the workers.
    await using _ops = await startWorkerOps({
      ...(values.http !== undefined ? { port: Number(values.http) } : {}),
      ...(values['http-host'] !== undefined ? { host: values['http-host'] } : {}),
      configPath: values.config,
      config,
      databasePath: databasePath(config, env),
      worker: {
        queues: [app.queue, _writes.writes.queue],
        redis: app.redis,
        // Writes first: their reload cannot fail once the config is validated; the sync side then waits on Redis.
        reload: async (c, e) => {
          _writes.reload(c, e);
          await app.reload(c, e);
        },
      },
      metrics,
      log,
    });
    await app.run(stop.signal);
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
  log.flush();
  return 0;
}
