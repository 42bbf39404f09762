import { type Kysely, sql } from 'kysely';
import type { ChangeHorizon } from './change-horizon.js';
import type { Database } from './db-schema.js';

/** A connection (or pool) to a mirror and its Kysely instance. */
export interface MirrorConnection {
  readonly db: Kysely<Database>;
  /**
   * How far the change feed has settled, where the engine's writers commit out of `seq` order (PostgreSQL);
   * without it, every seq shown has settled (SQLite).
   */
  readonly changeHorizon?: ChangeHorizon;
  /** Closes the connection (pool). Idempotent. */
  close(): Promise<void>;
}

/**
 * A mirror opened read-write, and what differs between the engines in writing it, nothing more (as Kysely's dialect
 * adapters): every query is built once with Kysely and runs on both; only how a write transaction begins and is
 * ordered, and how many parameters a statement carries, differ here.
 */
export interface StoreEngine extends MirrorConnection {
  /**
   * The statement that opens a write transaction: SQLite's `begin immediate` takes the file's write lock at once
   * (waiting on the busy timeout), so a transaction that reads before it writes never fails with SQLITE_BUSY when
   * another process wrote in between; PostgreSQL's `begin` is READ COMMITTED.
   */
  readonly begin: 'begin immediate' | 'begin';
  /**
   * Runs one write transaction at a time where the engine needs it: SQLite connections of one process to one file
   * share a thread, so a second `begin immediate` would block it while the first transaction waits on a promise.
   */
  readonly exclusive?: <T>(fn: () => Promise<T>) => Promise<T>;
  /**
   * Run first in a transaction that may change record rows, before any other statement of it, where the engine
   * needs it for the change feed's horizon: PostgreSQL's change-writing transactions commit in parallel, out of
   * `seq` order, and this notes how far the change sequence had gone before the transaction takes its id
   * (`changes.seq_floor`, see `ChangeHorizon`). SQLite's writers commit one at a time, in `seq` order.
   */
  readonly noteChanges?: (db: Kysely<Database>) => Promise<void>;
  /** How many bound parameters one statement may carry (SQLite: 32766; PostgreSQL: 65535). */
  readonly maxParameters: number;
  /**
   * Throws when the mirror the setting names is no longer the one this connection opened (a SQLite file removed or
   * replaced under the process), where the engine can tell.
   */
  readonly assertSameMirror?: () => void;
  /**
   * After rows were copied into `table` with their keys, makes the engine's generator of `column` go on after the
   * largest (a PostgreSQL sequence); SQLite's rowids follow the largest by themselves.
   */
  readonly continueKeys?: (table: string, column: string) => Promise<void>;
}

/**
 * Runs `fn` in one transaction on ONE connection (a pooled engine must not spread a transaction over two):
 * committed when `fn` resolves, rolled back when it throws.
 */
export async function inTransaction<T>(engine: StoreEngine, fn: (db: Kysely<Database>) => Promise<T>): Promise<T> {
  const run = () => oneTransaction(engine, fn);
  return engine.exclusive ? engine.exclusive(run) : run();
}

async function oneTransaction<T>(engine: StoreEngine, fn: (db: Kysely<Database>) => Promise<T>): Promise<T> {
  return engine.db.connection().execute(async (conn) => {
    await sql.raw(engine.begin).execute(conn);
    let result: T;
    try {
      result = await fn(conn);
    } catch (err) {
      await sql`rollback`.execute(conn).catch(() => undefined);
      throw err;
    }
    await sql`commit`.execute(conn);
    return result;
  });
}
