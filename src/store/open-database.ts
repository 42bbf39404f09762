import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, type SqliteDatabase, SqliteDialect } from 'kysely';
import type { Database } from './db-schema.js';
import { SqliteThread, ThreadedSqliteDialect } from './sqlite-thread.js';

export interface OpenDatabaseOptions {
  /** Open without write access; the file must exist. */
  readonly readonly?: boolean;
}

/**
 * How a writable mirror's connection is set up: WAL, a 5 s busy timeout, `synchronous=NORMAL`, foreign keys on, and
 * the WAL checkpointed into the file every 8192 pages (32 MiB) rather than SQLite's 1000: a full sync rewrites the
 * same index pages page after page, and a checkpoint copies each page once however often it changed since the last
 * one (docs/benchmarks.md, Ingest).
 */
const WRITABLE_PRAGMAS = [
  'busy_timeout = 5000',
  'journal_mode = WAL',
  'synchronous = NORMAL',
  'temp_store = MEMORY',
  'wal_autocheckpoint = 8192',
  'foreign_keys = ON',
] as const;

/**
 * Opens (creating its folder and file) a writable SQLite database with `WRITABLE_PRAGMAS`, its connection held by
 * a worker thread (src/store/sqlite-thread.ts), so statements never block the main thread. Rejects with the
 * open's error (not a database, no permission). Closing is `db.destroy()`.
 */
export async function openWritableDatabase(path: string): Promise<{ db: Kysely<Database>; file: string }> {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const thread = await SqliteThread.open(path, WRITABLE_PRAGMAS);
  return { db: new Kysely<Database>({ dialect: new ThreadedSqliteDialect(thread) }), file: path };
}

/**
 * Opens a SQLite database on this thread, with `raw`, the connection Kysely uses: read-only (the file must exist)
 * for the commands that only read, or writable with the writable mirror's settings for tools that need the raw
 * connection (benchmarks).
 */
export function openDatabase(
  path: string,
  opts: OpenDatabaseOptions = {},
): { db: Kysely<Database>; raw: BetterSqlite3.Database } {
  const readonly = opts.readonly ?? false;
  if (!readonly && path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const raw = new BetterSqlite3(path, { readonly, fileMustExist: readonly });
  try {
    if (readonly) {
      raw.pragma('busy_timeout = 5000');
      raw.pragma('foreign_keys = ON');
    } else for (const p of WRITABLE_PRAGMAS) raw.pragma(p);
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
