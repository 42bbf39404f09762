import type BetterSqlite3 from 'better-sqlite3';
import type { CompiledQuery } from 'kysely';
import type { SqlValue } from './extract-row.js';

/**
 * Kysely-compiled queries run as better-sqlite3 statements, each prepared once per SQL text and reused. Every call
 * is synchronous: the store runs them inside its own `raw.transaction`.
 */
export class PreparedStatements {
  private readonly cache = new Map<string, BetterSqlite3.Statement>();

  constructor(readonly raw: BetterSqlite3.Database) {}

  /** The prepared statement for `q`'s SQL text (bind its parameters yourself). */
  prep(q: CompiledQuery): BetterSqlite3.Statement {
    let s = this.cache.get(q.sql);
    if (!s) {
      s = this.raw.prepare(q.sql);
      this.cache.set(q.sql, s);
    }
    return s;
  }

  /** Runs `q`; returns how many rows it changed. */
  run(q: CompiledQuery): number {
    return this.prep(q).run(...(q.parameters as SqlValue[])).changes;
  }

  /** Runs `q` and returns its rows. */
  all<R>(q: CompiledQuery<R>): R[] {
    return this.prep(q).all(...(q.parameters as SqlValue[])) as R[];
  }

  /** Forgets every prepared statement (before the connection closes). */
  clear(): void {
    this.cache.clear();
  }
}
