import { startServe } from '../app/start-serve.js';
import { loadConfigFile } from '../config/load-config.js';
import { createLogger } from '../log.js';
import { effectiveEnv } from '../ops/config-reload.js';
import { resolveServeTokens } from '../serve/serve-tokens.js';
import { printHelp } from './command-help.js';
import { keepGoingOnRejections } from './keep-going.js';
import { parseFlags } from './parse-flags.js';
import { SERVE_SPEC } from './specs/serve-spec.js';
import { stopped, untilStopped } from './stop-signal.js';

export async function serveCommand(argv: string[]): Promise<number> {
  const { values, help } = parseFlags(argv, SERVE_SPEC);
  if (help) return printHelp(SERVE_SPEC, help);
  const { port, http: opsPort } = values;
  const config = loadConfigFile(values.config);
  const env = effectiveEnv(process.env);
  // The tokens first: a missing one stops here, one stderr line, before anything is opened or logged.
  resolveServeTokens(config, env);
  const log = createLogger();
  const stopping = new AbortController();
  keepGoingOnRejections(log, stopping.signal, 'serve');
  const running = await startServe({
    config,
    configPath: values.config,
    env,
    log,
    ...(port !== undefined ? { port } : {}),
    ...(values.host !== undefined ? { host: values.host } : {}),
    ...(opsPort !== undefined ? { opsPort } : {}),
    ...(values['http-host'] !== undefined ? { opsHost: values['http-host'] } : {}),
  });
  await untilStopped(
    async (stop) => {
      await stopped(stop);
      stopping.abort();
      await running.close();
    },
    (signal) => log.info({ signal }, 'shutdown requested'),
  );
  log.info('serve stopped');
  return 0;
}
