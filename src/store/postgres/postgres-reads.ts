import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { closeOnce } from '../../close-all.js';
import { UnderstudyError } from '../../errors.js';
import type { Database } from '../db-schema.js';
import { postgresJson } from '../reads/json-sql.js';
import type { ReadsConnection } from '../reads/reads-connection.js';
import { poolConfig } from './pool-config.js';
import { postgresUnreachable } from './postgres-unreachable.js';
import { preparingPool, StatementNames } from './preparing-pool.js';

/**
 * The PostgreSQL mirror at `url` for reads: a pool of `connections`, every transaction read-only, each statement
 * stopped by the server past `timeoutMs` (`statement_timeout`; SQLSTATE 57014 then); the statements that repeat are
 * prepared (preparing-pool.ts).
 */
export async function openPostgresReads(url: string, timeoutMs: number, connections: number): Promise<ReadsConnection> {
  const config = poolConfig(url, connections);
  const pool = new pg.Pool({
    ...config,
    options: `-c default_transaction_read_only=on -c statement_timeout=${Math.max(1, Math.round(timeoutMs))}`,
  });
  pool.on('error', () => undefined);
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: preparingPool(pool, new StatementNames()) }),
  });
  try {
    await db.selectFrom('sync_state').select('tenant').limit(1).execute();
  } catch (err) {
    await db.destroy().catch(() => undefined);
    throw postgresUnreachable(url, err);
  }
  return {
    db,
    json: postgresJson,
    guard: null,
    close: closeOnce(() => db.destroy()),
    failure: (err) =>
      (err as { code?: string }).code === '57014'
        ? new UnderstudyError('US_TIMEOUT', `a read ran past its time limit (${timeoutMs} ms)`, { cause: err })
        : err,
  };
}
