import type { Config } from './config-schema.js';

export const DEFAULT_DATABASE = './data/understudy.db';

/**
 * Where the mirror is, the one rule every command follows: `--db`, else the config's `database`, else
 * `UNDERSTUDY_DB`, else ./data/understudy.db.
 */
export const databasePath = (
  config: Pick<Config, 'database'> | null | undefined,
  env: NodeJS.ProcessEnv,
  flag?: string,
): string => flag ?? config?.database ?? env.UNDERSTUDY_DB ?? DEFAULT_DATABASE;
