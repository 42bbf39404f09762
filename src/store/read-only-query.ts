import { UnderstudyError } from '../errors.js';

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
