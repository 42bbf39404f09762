import { openMigratedDatabase } from './migrate.js';
import { type MirrorHealth, sqliteMirrorHealth } from './mirror-health.js';
import { SqliteStore } from './sqlite-store.js';
import type { Store } from './store.js';
import { sqliteWriteLog, type WriteLog } from './write-log.js';

/** Everything a process reads and writes in the mirror, over ONE connection to the file. */
export interface Mirror {
  readonly store: Store;
  readonly writeLog: WriteLog;
  readonly health: MirrorHealth;
  /** Closes the connection. Idempotent. */
  close(): Promise<void>;
}

/**
 * Opens (creating when missing) the mirror at `path`, brings its schema to the latest migration, and builds the
 * store, the write log and the health queries over the same better-sqlite3 connection and Kysely instance.
 */
export async function openMirror(path: string): Promise<Mirror> {
  const { db, raw } = await openMigratedDatabase(path);
  const store = new SqliteStore(db, raw);
  return {
    store,
    writeLog: sqliteWriteLog(raw),
    health: sqliteMirrorHealth(raw, path),
    // The store owns the connection (it destroys Kysely and closes the handle).
    close: () => store.close(),
  };
}
