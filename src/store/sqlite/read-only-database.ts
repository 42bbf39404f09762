import { existsSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { ConfigError } from '../../errors.js';

/**
 * Opens the mirror at `path` read-only, with `query_only` on too. Throws `US_CONFIG` for a missing or unreadable
 * file (the one message every read-only command gives).
 */
export function openReadOnlyDatabase(path: string): BetterSqlite3.Database {
  if (!existsSync(path))
    throw new ConfigError(`database ${path} does not exist (run \`understudy sync\` first or pass --db)`);
  let db: BetterSqlite3.Database;
  try {
    db = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new ConfigError(`cannot open database ${path}: ${(err as Error).message}`, { cause: err });
  }
  try {
    db.pragma('busy_timeout = 5000');
    // Belt and braces: the connection is read-only already; query_only also refuses writes to temp tables.
    db.pragma('query_only = ON');
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}
