import type { MirrorConnection } from '../engine.js';
import type { JsonSql, Sql } from './json-sql.js';

/**
 * A read-only connection for answering the upstream's reads from the mirror: the engine's JSON functions, and each
 * statement held to a time limit (`US_TIMEOUT` past it), by the server itself where the engine has one
 * (PostgreSQL's `statement_timeout`), else by `guard`, a condition that fails the statement once it is late.
 */
export interface ReadsConnection extends MirrorConnection {
  readonly json: JsonSql;
  readonly guard: Sql | null;
  /** Turns a failure of a statement into `US_TIMEOUT` when it ran past its limit; other failures as they are. */
  failure(err: unknown): unknown;
  /**
   * A number that changes whenever the mirror may have changed (SQLite's `data_version`: any other connection's
   * commit), asked without a statement's cost; absent where the engine has none such (PostgreSQL).
   */
  readonly changeMark?: () => number;
}
