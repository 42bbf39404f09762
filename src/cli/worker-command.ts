import { runWorkerProcess } from '../app/run-worker-process.js';
import { loadConfigFile } from '../config/load-config.js';
import { UsageError } from '../errors.js';
import { createLogger } from '../log.js';
import { printHelp } from './command-help.js';
import { keepGoingOnRejections } from './keep-going.js';
import { parseFlags } from './parse-flags.js';
import { WORKER_SPEC } from './specs/worker-spec.js';

type WorkerValues = ReturnType<typeof parseFlags<(typeof WORKER_SPEC)['flags']>>['values'];

/** `--concurrency` (returned), `--http` and `--http-host`, checked. */
function checkedFlags(values: WorkerValues): number | undefined {
  let concurrency: number | undefined;
  if (values.concurrency !== undefined) {
    concurrency = Number(values.concurrency);
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new UsageError('--concurrency must be an integer >= 1');
  }
  if (values.http !== undefined && !/^\d+$/.test(values.http)) throw new UsageError('--http must be a port number');
  if (values['http-host'] !== undefined && (values.http === undefined || values['http-host'] === ''))
    throw new UsageError('--http-host needs --http PORT and a host name or address');
  return concurrency;
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
  let end: { readonly redisGoneAtStop: boolean };
  try {
    end = await runWorkerProcess(config, process.env, {
      configPath: values.config,
      log,
      signal: stop.signal,
      ...(concurrency ? { concurrency } : {}),
      ...(values.http !== undefined
        ? {
            http: {
              port: Number(values.http),
              ...(values['http-host'] !== undefined ? { host: values['http-host'] } : {}),
            },
          }
        : {}),
    });
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
  log.flush();
  // With Redis gone at stop, BullMQ's stalled checker is left waiting out a timer (5 s after its command failed,
  // then its interval) though everything is closed: exit once this returns, not at the CLI's 3 s fallback.
  if (end.redisGoneAtStop) setImmediate(() => process.exit(0));
  return 0;
}
