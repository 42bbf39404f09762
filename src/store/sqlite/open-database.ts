import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, type SqliteDatabase, SqliteDialect } from 'kysely';
import type { Database } from '../db-schema.js';

/** An open SQLite connection: Kysely over it, and the handle itself (`raw`, the same connection). */
export interface OpenDatabase {
  readonly db: Kysely<Database>;
  readonly raw: BetterSqlite3.Database;
}

export interface OpenDatabaseOptions {
  /** Open without write access; the file must exist. */
  readonly readonly?: boolean;
}

/**
 * Opens (creating its folder and file when writable) a SQLite database in WAL mode with a 5 s busy timeout,
 * `synchronous=NORMAL` and foreign keys on. `raw` is the same connection Kysely uses.
 */
export function openDatabase(path: string, opts: OpenDatabaseOptions = {}): OpenDatabase {
  const readonly = opts.readonly ?? false;
  if (!readonly && path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const raw = new BetterSqlite3(path, { readonly, fileMustExist: readonly });
  try {
    raw.pragma('busy_timeout = 5000');
    if (!readonly) {
      raw.pragma('journal_mode = WAL');
      raw.pragma('synchronous = NORMAL');
      raw.pragma('temp_store = MEMORY');
      // The WAL is checkpointed into the file every 8192 pages (32 MiB) rather than SQLite's 1000: a full sync
      // rewrites the same index pages page after page, and a checkpoint copies each page once however often it
      // changed since the last one (docs/benchmarks.md, Simulator: full sync end to end).
      raw.pragma('wal_autocheckpoint = 8192');
    }
    raw.pragma('foreign_keys = ON');
  } catch (err) {
    raw.close();
    throw err;
  }
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: cachingStatements(raw) }) });
  return { db, raw };
}

/** How many prepared statements a connection keeps (the store's queries number a few dozen per table layout). */
const STATEMENT_CACHE = 256;

/**
 * The connection as Kysely's SQLite driver sees it, with each statement prepared once per SQL text and kept: a
 * page's multi-row upsert is a long statement, and preparing it again for every page would cost more than running
 * it. Safe because Kysely runs one query at a time on the connection. The least recently used is dropped first.
 */
function cachingStatements(raw: BetterSqlite3.Database): SqliteDatabase {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => {
      cache.clear();
      raw.close();
    },
    prepare(sqlText) {
      let stmt = cache.get(sqlText);
      if (stmt) cache.delete(sqlText);
      else stmt = raw.prepare(sqlText);
      cache.set(sqlText, stmt);
      if (cache.size > STATEMENT_CACHE) cache.delete(cache.keys().next().value as string);
      return stmt as unknown as ReturnType<SqliteDatabase['prepare']>;
    },
  };
}
