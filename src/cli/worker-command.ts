import { runWorkerProcess } from '../app/run-worker-process.js';
import { loadConfigFile } from '../config/load-config.js';
import { UsageError } from '../errors.js';
import { createLogger } from '../log.js';
import { printHelp } from './command-help.js';
import { keepGoingOnRejections } from './keep-going.js';
import { parseFlags } from './parse-flags.js';
import { WORKER_SPEC } from './specs/worker-spec.js';
import { untilStopped } from './stop-signal.js';

type WorkerValues = ReturnType<typeof parseFlags<(typeof WORKER_SPEC)['flags']>>['values'];

/** `--concurrency` (returned; the parser checked it, `--http` and that `--http-host` comes with it): a host named. */
function checkedFlags(values: WorkerValues): number | undefined {
  if (values['http-host'] === '') throw new UsageError('--http-host needs --http PORT and a host name or address');
  return values.concurrency;
}

export async function workerCommand(argv: string[]): Promise<number> {
  const { values, help } = parseFlags(argv, WORKER_SPEC);
  if (help) return printHelp(WORKER_SPEC, help);
  const concurrency = checkedFlags(values);
  const config = loadConfigFile(values.config);
  const log = createLogger();
  const end = await untilStopped(
    (stop) => {
      keepGoingOnRejections(log, stop, 'the worker');
      return runWorkerProcess(config, process.env, {
        configPath: values.config,
        log,
        signal: stop,
        ...(concurrency ? { concurrency } : {}),
        ...(values.http !== undefined
          ? {
              http: {
                port: values.http,
                ...(values['http-host'] !== undefined ? { host: values['http-host'] } : {}),
              },
            }
          : {}),
      });
    },
    (signal) => log.info({ signal }, 'shutdown requested'),
  );
  log.flush();
  // With Redis gone at stop, BullMQ's stalled checker is left waiting out a timer (5 s after its command failed,
  // then its interval) though everything is closed: exit once this returns, not at the CLI's 3 s fallback.
  if (end.redisGoneAtStop) setImmediate(() => process.exit(0));
  return 0;
}
