import type BetterSqlite3 from 'better-sqlite3';
import { Kysely, type SqliteDatabase, SqliteDialect, type SqliteStatement, sql } from 'kysely';
import { UnderstudyError } from '../../errors.js';
import type { Database } from '../db-schema.js';
import { sqliteJson } from '../reads/json-sql.js';
import type { ReadsConnection } from '../reads/reads-connection.js';
import { openReadOnlyDatabase } from './read-only-database.js';
import { sqliteConnection } from './sqlite-engine.js';

const LATE = 'understudy: statement time limit';
const STATEMENTS = 128;

/**
 * Statements whose run is timed: better-sqlite3 has no progress handler nor interrupt, so a function the reads call
 * on every row they look at (`understudy_in_time()`) fails the statement once it has run `timeoutMs`.
 */
function timedStatements(raw: BetterSqlite3.Database, timeoutMs: number): SqliteDatabase {
  let deadline = Number.POSITIVE_INFINITY;
  raw.function('understudy_in_time', { deterministic: false }, () => {
    if (Date.now() > deadline) throw new Error(LATE);
    return 1;
  });
  const timed =
    <A extends unknown[], R>(fn: (...a: A) => R) =>
    (...a: A): R => {
      deadline = Date.now() + timeoutMs;
      try {
        return fn(...a);
      } finally {
        deadline = Number.POSITIVE_INFINITY;
      }
    };
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => raw.close(),
    prepare(sqlText) {
      let stmt = cache.get(sqlText);
      if (!stmt) {
        const s = raw.prepare(sqlText);
        stmt = {
          reader: s.reader,
          all: timed((p: ReadonlyArray<unknown>) => s.all(...p)),
          run: timed((p: ReadonlyArray<unknown>) => s.run(...p)),
          iterate: (p: ReadonlyArray<unknown>) => s.iterate(...p),
        };
        if (cache.size >= STATEMENTS) cache.delete(cache.keys().next().value as string);
        cache.set(sqlText, stmt);
      }
      return stmt;
    },
  };
}

/** The SQLite mirror at `path` opened read-only for reads held to `timeoutMs` a statement. */
export function openSqliteReads(path: string, timeoutMs: number): ReadsConnection {
  const raw = openReadOnlyDatabase(path);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: timedStatements(raw, timeoutMs) }) });
  const dataVersion = raw.prepare('pragma data_version').pluck();
  return {
    changeMark: () => Number(dataVersion.get()),
    ...sqliteConnection({ db, raw }),
    json: sqliteJson,
    guard: sql`understudy_in_time()`,
    failure: (err) =>
      err instanceof Error && err.message.includes(LATE)
        ? new UnderstudyError('US_TIMEOUT', `a read ran past its time limit (${timeoutMs} ms)`, { cause: err })
        : err,
  };
}
