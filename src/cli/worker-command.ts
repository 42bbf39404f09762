import { loadConfigFile } from '../config/load-config.js';
import { UsageError } from '../errors.js';
import { createLogger } from '../log.js';
import { createWorkerApp } from '../worker-app.js';
import { startConfiguredWriteWorker } from '../writes/write-worker.js';
import { parseFlags } from './parse-flags.js';

const HELP = `usage: understudy worker --config FILE [--concurrency N] [--http PORT]

Runs sync workers on the Redis queue (REDIS_URL, else config redis.url, else redis://127.0.0.1:6379): the
schedules of the config fire once per tick however many workers run, and jobs added by
\`understudy sync --enqueue\` are processed. SIGTERM or SIGINT: stop taking jobs, let each active sync commit
its page, close everything and exit 0.

  --config FILE       JSON config (tenants, schedule, redis, worker)
  --concurrency N     jobs run at once in this process (default: config worker.concurrency, else 2)
  --http PORT         reserved for the metrics and dashboard endpoint (not served yet)
`;

const FLAGS = {
  config: { type: 'string' },
  concurrency: { type: 'string' },
  http: { type: 'string' },
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
  const config = loadConfigFile(values.config);
  const log = createLogger();
  // TODO(issue 6): serve metrics and the queue dashboard on --http.
  if (values.http !== undefined) log.warn({ port: Number(values.http) }, '--http is not served yet');

  const stop = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    log.info({ signal: sig }, 'shutdown requested');
    stop.abort(sig);
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    await using app = await createWorkerApp(config, { log, ...(concurrency ? { concurrency } : {}) });
    // Writes (issue 5) drain in the same process; disposed first, so in-flight writes finish before sync closes.
    await using _writes = await startConfiguredWriteWorker(config, { log });
    await app.run(stop.signal);
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
  log.flush();
  return 0;
}
