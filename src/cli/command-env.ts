import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { didYouMean } from '../config/did-you-mean.js';
import { ConfigError } from '../errors.js';
import { LOG_LEVELS } from '../log.js';
import { ENV_FILE_ENV } from '../ops/config-reload.js';

const rank = (level: string): number => LOG_LEVELS.indexOf(level as (typeof LOG_LEVELS)[number]);

/**
 * What every command does with the flags they all share, the same way for each:
 *
 * - the env file (`--env-file FILE`, else the file `UNDERSTUDY_ENV_FILE` names) is read and laid over the process
 *   environment (its values win), and `UNDERSTUDY_ENV_FILE` then names it, so a worker's SIGHUP reads it again;
 * - `LOG_LEVEL` must be a pino level: anything else is refused (exit 2) naming the allowed ones;
 * - `--quiet` silences the log (JSON lines) altogether: stderr carries only the command's own readable line per
 *   problem (`understudy sync: …`), as cron wants; `--json` raises the log level to `warn`.
 *
 * Throws `ConfigError` for an unreadable env file or a bad `LOG_LEVEL`.
 */
export function applyCommonFlags(
  values: { readonly quiet?: boolean; readonly json?: boolean; readonly 'env-file'?: string },
  env: NodeJS.ProcessEnv = process.env,
): void {
  const file = values['env-file'] ?? env[ENV_FILE_ENV];
  if (file) {
    const source = values['env-file'] ? '--env-file' : ENV_FILE_ENV;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new ConfigError(
        `${source} ${file}: cannot read it (${code === 'ENOENT' ? 'no such file' : (code ?? 'error')})`,
        { cause: err },
      );
    }
    Object.assign(env, parseEnv(text));
    env[ENV_FILE_ENV] = resolve(file);
  }
  const level = env.LOG_LEVEL;
  if (level !== undefined && level !== '' && rank(level) < 0) {
    throw new ConfigError(
      `LOG_LEVEL=${level} is not a log level: use one of ${LOG_LEVELS.join(', ')}${didYouMean(level, LOG_LEVELS)}`,
    );
  }
  if (values.quiet) env.LOG_LEVEL = 'silent';
  else if (values.json && rank(level || 'info') < rank('warn')) env.LOG_LEVEL = 'warn';
}
