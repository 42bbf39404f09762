import type { Config } from '../config/config-schema.js';
import { databasePath } from '../config/database-path.js';
import { type MirrorReader, openMirrorReader as openReader } from '../store/mirror-reader.js';

/**
 * Opens an existing mirror read-only, for an app that enqueues writes (`createWriteQueue({ store })` checks bulk
 * custom-attribute and theme-settings writes against what it holds): from the config (its `database`, else
 * `UNDERSTUDY_DB`, else ./data/understudy.db, as every command), or a SQLite path or PostgreSQL URL. Nothing is
 * created or migrated; `US_CONFIG` when it is not an understudy mirror of this version. Close it when done.
 */
export function openMirrorReader(
  from: string | Pick<Config, 'database'>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<MirrorReader> {
  return openReader(typeof from === 'string' ? from : databasePath(from, env));
}
