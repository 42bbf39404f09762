import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database } from './db-schema.js';

export interface OpenDatabaseOptions {
  /** Open without write access; the file must exist. */
  readonly readonly?: boolean;
}

/**
 * Opens (creating its folder and file when writable) a SQLite database in WAL mode with a 5 s busy timeout,
 * `synchronous=NORMAL` and foreign keys on. `raw` is the same connection Kysely uses.
 */
export function openDatabase(
  path: string,
  opts: OpenDatabaseOptions = {},
): { db: Kysely<Database>; raw: BetterSqlite3.Database } {
  const readonly = opts.readonly ?? false;
  if (!readonly && path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const raw = new BetterSqlite3(path, { readonly, fileMustExist: readonly });
  try {
    raw.pragma('busy_timeout = 5000');
    if (!readonly) {
      raw.pragma('journal_mode = WAL');
      raw.pragma('synchronous = NORMAL');
    }
    raw.pragma('foreign_keys = ON');
  } catch (err) {
    raw.close();
    throw err;
  }
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: raw }) });
  return { db, raw };
}
