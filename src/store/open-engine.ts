import type { StoreEngine } from './engine.js';
import { migrateToLatest, openMigratedDatabase } from './migrate.js';
import { connectPostgres, isPostgresUrl } from './postgres-engine.js';
import { sqliteEngine } from './sqlite-store.js';

/**
 * Opens the mirror named by a database setting: a `postgres://` or `postgresql://` URL is a PostgreSQL server,
 * anything else a SQLite file (created when missing). Brings its schema to the latest migration; on PostgreSQL the
 * migrator holds a transaction-level advisory lock, so several hosts starting at once migrate once.
 */
export async function openMigratedEngine(database: string): Promise<StoreEngine> {
  if (!isPostgresUrl(database)) {
    const { db, raw } = await openMigratedDatabase(database);
    return sqliteEngine(db, raw);
  }
  const engine = await connectPostgres(database);
  try {
    await migrateToLatest(engine.db);
  } catch (err) {
    await engine.close().catch(() => undefined);
    throw err;
  }
  return engine;
}
