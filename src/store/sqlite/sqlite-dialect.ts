import { existsSync } from 'node:fs';
import { ConfigError } from '../../errors.js';
import type { Dialect, ReaderConnection } from '../dialect.js';
import { backupSqlite } from './backup-sqlite.js';
import { openDatabase } from './open-database.js';
import { sqliteCatalog } from './sqlite-catalog.js';
import { sqliteConnection, sqliteEngine } from './sqlite-engine.js';
import { openSqliteQuery } from './sqlite-query.js';
import { openSqliteReads } from './sqlite-reads.js';
import { searchSqlite } from './sqlite-search.js';
import { WriteQueue } from './write-queue.js';

/**
 * Opens the existing SQLite mirror at `path` read-only for a command that only reads it; `US_CONFIG` naming it when
 * it does not exist or cannot be opened. Backs up through the same connection.
 */
function openReader(path: string): ReaderConnection {
  if (path !== ':memory:' && !existsSync(path))
    throw new ConfigError(`database ${path} does not exist (run \`understudy sync\` first, or pass --db)`);
  let opened: ReturnType<typeof openDatabase>;
  try {
    opened = openDatabase(path, { readonly: true });
  } catch (err) {
    throw new ConfigError(`cannot open database ${path}: ${(err as Error).message}`, { cause: err });
  }
  return { ...sqliteConnection(opened), backup: (dest, o = {}) => backupSqlite(opened.raw, path, dest, o) };
}

/** The SQLite file at `path` (created when opened writable): WAL, one writer at a time per file. */
export function sqliteDialect(path: string): Dialect {
  const writes = new WriteQueue();
  return {
    shown: path,
    missing: () => !existsSync(path),
    openWritable: async () => sqliteEngine(path, openDatabase(path), writes),
    openReader: async () => openReader(path),
    openReadOnly: () => sqliteConnection(openDatabase(path, { readonly: true })),
    query: async (sqlText, params) => openSqliteQuery(path, sqlText, params),
    catalog: () => sqliteCatalog(path),
    openReads: async (o) => openSqliteReads(path, o.timeoutMs),
    search: (q) => Promise.resolve(searchSqlite(path, q)),
    assertBackupable: () => undefined,
  };
}
