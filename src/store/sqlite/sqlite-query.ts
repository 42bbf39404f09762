import type BetterSqlite3 from 'better-sqlite3';
import { isUnderstudyError, UnderstudyError, UsageError } from '../../errors.js';
import { assertReadOnly, type ReadOnlyQuery } from '../read-only-query.js';
import { JSON_COLUMNS } from '../schema-catalog.js';
import { openReadOnlyDatabase } from './read-only-database.js';

/** Rows handed on at a time: few enough that a pause for the output (backpressure) comes soon. */
const SQLITE_BATCH = 64;

/**
 * Opens the mirror read-only (`query_only` too) and prepares `sqlText` with named `params`, refusing anything but
 * a read. Throws `US_CONFIG` for a missing or unreadable database, `US_USAGE` for SQL that does not compile,
 * `US_READ_ONLY` for a statement that would change something, and `US_STORE` when reading a row fails.
 */
export function openSqliteQuery(
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
      throw new UsageError((err as Error).message, { cause: err });
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
          if (isUnderstudyError(err)) throw err;
          throw new UnderstudyError('US_STORE', (err as Error).message, { cause: err });
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
