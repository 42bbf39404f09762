import { existsSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { ConfigError, UnderstudyError, UsageError } from '../errors.js';

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

/** One statement of the user's over the mirror, opened read-only; its rows are read as they are iterated. */
export interface ReadOnlyQuery {
  /** Column names, in order; empty for a statement that returns no rows. */
  readonly columns: readonly string[];
  /** The rows as arrays, read one at a time from SQLite (never all held at once). Iterate once. */
  rows(): Iterable<unknown[]>;
  close(): void;
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
    let stmt: BetterSqlite3.Statement;
    try {
      stmt = db.prepare(sqlText);
    } catch (err) {
      throw new UsageError(`sql: ${(err as Error).message}`, { cause: err });
    }
    assertReadOnly(stmt, sqlText);
    const bind = Object.keys(params).length > 0 ? [params] : [];
    const columns = stmt.reader ? stmt.columns().map((c) => c.name) : [];
    const reading = stmt;
    return {
      columns,
      *rows() {
        try {
          if (reading.reader) yield* reading.raw(true).iterate(...bind) as Iterable<unknown[]>;
          else reading.run(...bind);
        } catch (err) {
          if (err instanceof UnderstudyError) throw err;
          throw new UnderstudyError('US_STORE', `sql: ${(err as Error).message}`, { cause: err });
        }
      },
      close: () => db.close(),
    };
  } catch (err) {
    db.close();
    throw err;
  }
}
