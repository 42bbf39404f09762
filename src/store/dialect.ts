import type { BackupResult } from './backup.js';
import type { CatalogReader } from './describe-mirror.js';
import type { MirrorConnection, StoreEngine } from './engine.js';
import { postgresDialect } from './postgres/postgres-dialect.js';
import type { ReadOnlyQuery } from './read-only-query.js';
import type { ReadsConnection } from './reads/reads-connection.js';
import type { SearchHit, SearchQuery } from './search-query.js';
import { sqliteDialect } from './sqlite/sqlite-dialect.js';

export { DatabaseUnreachableError, databaseMissing } from './database-unreachable-error.js';

/** A mirror opened read-only by a command that only reads it, with what only such a connection can do. */
export interface ReaderConnection extends MirrorConnection {
  /**
   * Writes a consistent copy of the mirror to `dest` (SQLite's backup API, one snapshot); `US_USAGE` for an engine
   * whose mirror is backed up with the server's own tools.
   */
  backup(dest: string, opts?: { readonly force?: boolean }): Promise<BackupResult>;
}

/**
 * One engine a mirror can live in, bound to one database setting (a SQLite path or a PostgreSQL URL), in the manner
 * of Kysely's dialects: everything that differs between the engines, and nothing the store writes once over it
 * (record rows, the write path, the change log, the write log). `dialectFor` picks it; nothing else asks which
 * engine runs. A dialect is cheap to make and opens nothing until asked.
 */
export interface Dialect {
  /** The database setting as messages and output show it: a URL's password hidden, a path as it is. */
  readonly shown: string;
  /** Whether the mirror is surely not there, known without asking a server: a SQLite file that does not exist. */
  missing(): boolean;
  /**
   * Opens the mirror read-write, creating it when missing (a SQLite file and its folder), not migrated yet; a
   * server that cannot be reached is `DatabaseUnreachableError`. Write transactions of the engines one dialect
   * opens, in one process, run one at a time where the engine needs it (`StoreEngine.exclusive`).
   */
  openWritable(): Promise<StoreEngine>;
  /**
   * Opens an existing mirror read-only for a command that only reads it: `US_CONFIG` naming it when it does not
   * exist or cannot be opened (`DatabaseUnreachableError` for a server). Nothing is created.
   */
  openReader(): Promise<ReaderConnection>;
  /**
   * A read-only connection made without a check of its own (health per call, the source of a copy): the first query
   * fails when the mirror cannot be reached.
   */
  openReadOnly(): MirrorConnection;
  /**
   * One statement of the user's (`understudy sql`), on a read-only connection of its own: `US_CONFIG` when the
   * mirror cannot be opened, `US_READ_ONLY` for a statement that would change something, `US_USAGE` for SQL the
   * engine refuses, `US_TIMEOUT` past `timeoutMs` where the engine stops it itself.
   */
  query(sqlText: string, params: Readonly<Record<string, string>>, timeoutMs?: number): Promise<ReadOnlyQuery>;
  /** The mirror's own catalog (relations, columns, indexes, counts) on a read-only connection of its own. */
  catalog(): CatalogReader;
  /**
   * A read-only connection for the upstream's reads (`serve`), each statement held to `timeoutMs`; `US_CONFIG` (or
   * `DatabaseUnreachableError`) when the mirror cannot be opened. `connections` sizes a server's pool.
   */
  openReads(opts: { readonly timeoutMs: number; readonly connections?: number }): Promise<ReadsConnection>;
  /** A ranked full-text search of `search_docs`, read-only; the tiers are alike on every engine (`searchMirror`). */
  search(q: SearchQuery): Promise<SearchHit[]>;
  /** Throws `US_USAGE` when `backup` cannot copy this engine's mirror, before anything connects to it. */
  assertBackupable(): void;
}

/**
 * The one place the engine is chosen: a `postgres://` or `postgresql://` URL is a PostgreSQL server, anything else
 * a SQLite file.
 */
export const dialectFor = (database: string): Dialect =>
  /^postgres(ql)?:\/\//i.test(database) ? postgresDialect(database) : sqliteDialect(database);

/** A dialect, or the dialect of a database setting. */
export const asDialect = (database: string | Dialect): Dialect =>
  typeof database === 'string' ? dialectFor(database) : database;

/** A database setting fit for messages and output: a URL's password hidden; a SQLite path as it is. */
export const shownDatabase = (database: string): string => dialectFor(database).shown;

/**
 * Whether the mirror `database` names is surely not there, known without connecting: a SQLite file that does not
 * exist (a PostgreSQL database is there or not at the server's say).
 */
export const mirrorMissing = (database: string): boolean => dialectFor(database).missing();
