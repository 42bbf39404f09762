import { existsSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { ConfigError, UnderstudyError, UsageError } from '../errors.js';
import { JSON_COLUMNS } from './schema-catalog.js';

/** Rows handed on at a time: few enough that a pause for the output (backpressure) comes soon. */
const SQLITE_BATCH = 64;

/** Statements SQLite calls read-only although they change the connection or rebuild the file. */
const REFUSED_VERBS = new Set(['ATTACH', 'DETACH', 'VACUUM', 'REINDEX', 'ANALYZE']);

/** The first keyword of a statement, past whitespace, comments and empty statements (`;`). */
export function leadingVerb(sqlText: string): string {
  const s = sqlText.replace(/^(\s+|;|--[^\n]*(\n|$)|\/\*[\s\S]*?(\*\/|$))*/, '');
  return (/^[A-Za-z]+/.exec(s)?.[0] ?? '').toUpperCase();
}

/**
 * Throws `US_READ_ONLY` unless the prepared statement only reads. A statement whose first keyword cannot be found
 * is refused too: SQLite skips a leading `;`, so the keyword is what runs, and it must be known to be harmless.
 */
export function assertReadOnly(stmt: { readonly readonly: boolean }, sqlText: string): void {
  const verb = leadingVerb(sqlText);
  if (stmt.readonly && verb !== '' && !REFUSED_VERBS.has(verb)) return;
  const what =
    verb === '' ? 'this statement is' : verb === 'WITH' ? 'WITH … statements that write are' : `${verb} statements are`;
  throw new UnderstudyError('US_READ_ONLY', `sql is read-only: ${what} refused`);
}

/**
 * What a column's values are, for printing them exactly: `json` (JSON text: print it as JSON), `maybe-json` (text
 * that may be JSON: an expression such as `doc -> 'participants'`, or a column the schema catalog calls JSON),
 * `number` (digits that may exceed 2^53: print them as they are), or `other` (print as given).
 */
export type ColumnKind = 'json' | 'maybe-json' | 'number' | 'other';

/** One statement of the user's over the mirror, opened read-only; its rows are read as they are iterated. */
export interface ReadOnlyQuery {
  /** Column names, in order; empty for a statement that returns no rows. */
  readonly columns: readonly string[];
  readonly kinds: readonly ColumnKind[];
  /**
   * The rows as arrays, in batches read as they are asked for (never all held at once). Integers are never rounded
   * (SQLite: `bigint`; PostgreSQL: a number when exact, else its digits). Iterate once.
   */
  batches(): AsyncIterable<unknown[][]>;
  close(): void | Promise<void>;
}

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

/**
 * Opens the mirror read-only (`query_only` too) and prepares `sqlText` with named `params`, refusing anything but
 * a read. Throws `US_CONFIG` for a missing or unreadable database, `US_USAGE` for SQL that does not compile,
 * `US_READ_ONLY` for a statement that would change something, and `US_STORE` when reading a row fails.
 */
export function openReadOnlyQuery(
  path: string,
  sqlText: string,
  params: Readonly<Record<string, string>>,
): ReadOnlyQuery {
  const db = openReadOnlyDatabase(path);
  try {
    let stmt: BetterSqlite3.Statement;
    try {
      stmt = db.prepare(sqlText);
    } catch (err) {
      throw new UsageError(`sql: ${(err as Error).message}`, { cause: err });
    }
    assertReadOnly(stmt, sqlText);
    const bind = Object.keys(params).length > 0 ? [params] : [];
    const described = stmt.reader ? stmt.columns() : [];
    const reading = stmt.reader ? stmt.safeIntegers(true) : stmt;
    return {
      columns: described.map((c) => c.name),
      kinds: described.map((c) => (c.column === null || JSON_COLUMNS.has(c.column) ? 'maybe-json' : 'other')),
      async *batches() {
        try {
          if (!reading.reader) {
            reading.run(...bind);
            return;
          }
          let batch: unknown[][] = [];
          for (const r of reading.raw(true).iterate(...bind) as Iterable<unknown[]>) {
            batch.push(r);
            if (batch.length === SQLITE_BATCH) {
              yield batch;
              batch = [];
            }
          }
          if (batch.length > 0) yield batch;
        } catch (err) {
          if (err instanceof UnderstudyError) throw err;
          throw new UnderstudyError('US_STORE', `sql: ${(err as Error).message}`, { cause: err });
        }
      },
      close: () => {
        db.close();
      },
    };
  } catch (err) {
    db.close();
    throw err;
  }
}
