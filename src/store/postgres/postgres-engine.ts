import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { closeOnce } from '../../close-all.js';
import type { Database } from '../db-schema.js';
import type { StoreEngine } from '../engine.js';
import { poolConfig } from './pool-config.js';
import { noteSeqFloor, postgresChangeHorizon } from './postgres-change-horizon.js';
import { postgresUnreachable } from './postgres-unreachable.js';

/** PostgreSQL's limit on bound parameters per statement. */
const PG_MAX_PARAMETERS = 65535;

export interface PostgresEngineOptions {
  readonly maxConnections?: number;
  /** Every transaction read-only (`default_transaction_read_only`): the commands that only read. */
  readonly readOnly?: boolean;
}

/** Makes the sequence of `table.column` go on after the largest key copied into it. */
async function continueSequence(db: Kysely<Database>, table: string, column: string): Promise<void> {
  const [t, c] = [sql.lit(table), sql.ref(column)];
  await sql`select setval(pg_get_serial_sequence(${t}, ${sql.lit(column)}), coalesce((select max(${c}) from ${sql.table(table)}), 0) + 1, false)`.execute(
    db,
  );
}

/**
 * The PostgreSQL engine: a `pg` pool behind Kysely's PostgresDialect. Transactions run on one pooled connection
 * (`inTransaction`), at READ COMMITTED; the write rules hold there because they are single statements.
 */
export function postgresEngine(url: string, opts: PostgresEngineOptions = {}): StoreEngine {
  const config = poolConfig(url, opts.maxConnections ?? 4);
  const pool = new pg.Pool(opts.readOnly ? { ...config, options: '-c default_transaction_read_only=on' } : config);
  // An idle connection the server drops (a restart, a failover) must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    begin: 'begin',
    noteChanges: noteSeqFloor,
    changeHorizon: postgresChangeHorizon,
    maxParameters: PG_MAX_PARAMETERS,
    continueKeys: (table, column) => continueSequence(db, table, column),
    close: closeOnce(() => db.destroy()),
  };
}

/**
 * The PostgreSQL engine of `url`, once a connection to it has been made: else `DatabaseUnreachableError` (the
 * database missing, the server down, the password refused), the pool closed, nothing left open.
 */
export async function connectPostgres(url: string, opts: PostgresEngineOptions = {}): Promise<StoreEngine> {
  const engine = postgresEngine(url, opts);
  try {
    await sql`select 1`.execute(engine.db);
  } catch (err) {
    await engine.close().catch(() => undefined);
    throw postgresUnreachable(url, err);
  }
  return engine;
}
