import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { ConfigError } from '../errors.js';
import type { Database } from './db-schema.js';
import type { StoreEngine } from './engine.js';

/** Whether a database setting names a PostgreSQL server rather than a SQLite file. */
export const isPostgresUrl = (database: string): boolean => /^postgres(ql)?:\/\//i.test(database);

/** A database setting fit for messages and output: a URL's password hidden; a SQLite path as it is. */
export const shownDatabase = (database: string): string => {
  if (!isPostgresUrl(database)) return database;
  try {
    const u = new URL(database);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'the PostgreSQL URL';
  }
};

/**
 * A PostgreSQL mirror that cannot be reached (`US_CONFIG`, as a SQLite file that cannot be opened): `cannot connect
 * to postgres://…: <the server's or the network's reason>`, the password hidden.
 */
export class DatabaseUnreachableError extends ConfigError {
  /** The server answered that the database does not exist (what a missing SQLite file is to that engine). */
  readonly missing: boolean;
  constructor(url: string, cause: unknown) {
    super(`cannot connect to ${shownDatabase(url)}: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.missing = (cause as { code?: unknown } | null)?.code === '3D000';
  }
}

/** PostgreSQL's limit on bound parameters per statement. */
const PG_MAX_PARAMETERS = 65535;

/**
 * How values come back from PostgreSQL: as SQLite gives them, so that no code above the store (and no output of
 * `understudy sql`) knows which engine runs. `bigint` (counts, sums) as a number when exact, else its digits;
 * `json`/`jsonb` as text exactly as stored (the store parses it losslessly; `JSON.parse` would round large
 * integers); `numeric` as its digits. Timestamps are not a trap here: the mirror keeps instants as UTC ISO text.
 */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    switch (oid) {
      case pg.types.builtins.INT8:
        return (v: string) => (Number.isSafeInteger(Number(v)) ? Number(v) : v);
      case pg.types.builtins.JSON:
      case pg.types.builtins.JSONB:
      case pg.types.builtins.NUMERIC:
        return (v: string) => v;
      default:
        return pg.types.getTypeParser(oid, format ?? 'text');
    }
  },
};

/** The `pg` pool settings every mirror connection uses. */
export function poolConfig(url: string, max: number): pg.PoolConfig {
  return {
    connectionString: url,
    max,
    types: types as pg.CustomTypesConfig,
    // A connection left idle is closed, so a stopped process leaves none open on the server.
    idleTimeoutMillis: 10_000,
    connectionTimeoutMillis: 10_000,
    application_name: 'understudy',
  };
}

/**
 * The PostgreSQL engine: a `pg` pool behind Kysely's PostgresDialect. Transactions run on one pooled connection
 * (`inTransaction`), at READ COMMITTED; the write rules hold there because they are single statements.
 */
export function postgresEngine(
  url: string,
  opts: {
    readonly maxConnections?: number;
    /** Every transaction read-only (`default_transaction_read_only`): the commands that only read. */
    readonly readOnly?: boolean;
  } = {},
): StoreEngine {
  const config = poolConfig(url, opts.maxConnections ?? 4);
  const pool = new pg.Pool(opts.readOnly ? { ...config, options: '-c default_transaction_read_only=on' } : config);
  // An idle connection the server drops (a restart, a failover) must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  let closing: Promise<void> | undefined;
  return {
    name: 'postgres',
    db,
    begin: 'begin',
    serialiseChanges: async (conn) => {
      // The change log's lock (the triggers take it too, migration 2026-11-27-020), held from the start of a
      // change-writing transaction to its commit, so those transactions commit in `seq` order. A row lock, not an
      // advisory one: a READ ONLY transaction (`understudy sql`) cannot take it, so no reader can stall writers.
      const { rows } = await sql`select id from change_log_lock for update`.execute(conn);
      if (rows.length !== 1) throw new Error('change_log_lock has lost its row: changes cannot be ordered');
    },
    maxParameters: PG_MAX_PARAMETERS,
    close() {
      closing ??= db.destroy();
      return closing;
    },
  };
}

/**
 * The PostgreSQL engine of `url`, once a connection to it has been made: else `DatabaseUnreachableError` (the
 * database missing, the server down, the password refused), the pool closed, nothing left open.
 */
export async function connectPostgres(
  url: string,
  opts: Parameters<typeof postgresEngine>[1] = {},
): Promise<StoreEngine> {
  const engine = postgresEngine(url, opts);
  try {
    await sql`select 1`.execute(engine.db);
  } catch (err) {
    await engine.close().catch(() => undefined);
    throw new DatabaseUnreachableError(url, err);
  }
  return engine;
}
