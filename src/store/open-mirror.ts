import type { ChangeLog } from '../changes/change-log-port.js';
import type { CheckStore } from '../sync/self-check.js';
import type { Store } from '../sync/store-port.js';
import type { Clock } from '../vocabulary/clock.js';
import type { WriteLog } from '../writes/write-log.js';
import { KyselyChangeLog } from './change-log.js';
import { KyselyStore } from './kysely-store.js';
import { type MirrorHealth, mirrorHealth } from './mirror-health.js';
import { openMigratedEngine } from './open-engine.js';
import { isPostgresUrl } from './postgres-engine.js';
import { kyselyWriteLog } from './write-log.js';

/** Everything a process reads and writes in the mirror, over ONE connection (or pool) to it. */
export interface Mirror {
  readonly store: Store;
  readonly writeLog: WriteLog;
  readonly health: MirrorHealth;
  /** The change log, the webhook endpoints' positions in it, and the self-check's counts and results. */
  readonly changes: ChangeLog & CheckStore;
  /** Which engine holds the mirror. */
  readonly engine: 'sqlite' | 'postgres';
  /** Closes the connection. Idempotent. */
  close(): Promise<void>;
}

/**
 * Opens the mirror named by `database` (a SQLite path, created when missing, or a PostgreSQL URL), brings its
 * schema to the latest migration, and builds the store, the write log and the health queries over the same
 * connection and Kysely instance. The store reckons lease expiry by `clock` (default the real one).
 */
export async function openMirror(database: string, clock?: Clock): Promise<Mirror> {
  const engine = await openMigratedEngine(database);
  const store = new KyselyStore(engine, clock);
  return {
    store,
    writeLog: kyselyWriteLog(engine.db),
    health: mirrorHealth(engine.db, isPostgresUrl(database) ? null : database),
    changes: new KyselyChangeLog(engine),
    engine: engine.name,
    // The store owns the connection (closing it closes the engine).
    close: () => store.close(),
  };
}
