import type { ChangeLog } from '../changes/change-log-port.js';
import { isUnderstudyError, UnderstudyError } from '../errors.js';
import type { CheckStore } from '../sync/self-check.js';
import type { Store } from '../sync/store-port.js';
import type { WatchStore } from '../sync/watch-port.js';
import { type Clock, systemClock } from '../vocabulary/clock.js';
import type { WriteLog } from '../writes/write-log.js';
import { KyselyChangeLog } from './change-log.js';
import { asDialect, type Dialect } from './dialect.js';
import type { StoreEngine } from './engine.js';
import { KyselyStore } from './kysely-store.js';
import { migrateToLatest } from './migrate.js';
import { type MirrorHealth, mirrorHealth } from './mirror-health.js';
import { watchTables } from './watch-table.js';
import { kyselyWriteLog } from './write-log.js';

/** Everything a process reads and writes in the mirror, over ONE connection (or pool) to it. */
export interface Mirror {
  readonly store: Store;
  readonly writeLog: WriteLog;
  readonly health: MirrorHealth;
  /** The change log, the webhook endpoints' positions in it, and the self-check's counts and results. */
  readonly changes: ChangeLog & CheckStore;
  /** What watch keeps in the mirror (`watch_owners`, `watch_state`) and the live rows it compares. */
  readonly watch: WatchStore;
  /** Closes the connection. Idempotent. */
  close(): Promise<void>;
}

/**
 * Opens the mirror read-write (created when missing) and brings its schema to the latest migration: the one way a
 * writable mirror is opened. On PostgreSQL the migrator holds a transaction-level advisory lock, so several hosts
 * starting at once migrate once. A failed migration closes the connection and throws `US_STORE`.
 */
export async function openMigratedEngine(database: string | Dialect): Promise<StoreEngine> {
  const engine = await asDialect(database).openWritable();
  try {
    await migrateToLatest(engine.db);
  } catch (err) {
    await engine.close().catch(() => undefined);
    throw isUnderstudyError(err)
      ? err
      : new UnderstudyError('US_STORE', `store: migrate failed: ${(err as Error).message}`, { cause: err });
  }
  return engine;
}

/**
 * Opens the mirror `database` names (a SQLite path, created when missing, or a PostgreSQL URL), brings its schema
 * to the latest migration, and builds the store, the write log and the health queries over the same connection and
 * Kysely instance. Given a dialect rather than a setting, the mirrors it opens share its write order (SQLite: one
 * write transaction at a time per file, in this process). The store reckons lease expiry by `clock` (default the real
 * one).
 */
export async function openMirror(database: string | Dialect, clock?: Clock): Promise<Mirror> {
  const engine = await openMigratedEngine(database);
  const store = new KyselyStore(engine, clock);
  const changes = new KyselyChangeLog(engine);
  const time = clock ?? systemClock;
  return {
    store,
    writeLog: kyselyWriteLog(engine.db),
    health: mirrorHealth(engine),
    changes,
    watch: {
      countLive: (key) => changes.countLive(key),
      liveVersions: (key, range) => changes.liveVersions(key, range),
      claimWatch: (tenants, holder, ttlMs) => watchTables.claim(engine.db, tenants, holder, ttlMs, time),
      releaseWatch: (holder) => watchTables.release(engine.db, holder),
      saveWatchStatus: (rows, at) => watchTables.save(engine.db, rows, at),
    },
    // The store owns the connection (closing it closes the engine).
    close: () => store.close(),
  };
}

/** The store alone (sync's `Store` port) over a connection of its own, opened as `openMirror` does. */
export async function openStore(database: string | Dialect, clock?: Clock): Promise<Store> {
  return new KyselyStore(await openMigratedEngine(database), clock);
}

/**
 * The write log alone over a connection of its own, opened as `openMirror` does (the commands that change only the
 * log; a process that also holds the store takes `Mirror.writeLog`). `close()` closes that connection.
 */
export async function openWriteLog(database: string): Promise<WriteLog> {
  const engine = await openMigratedEngine(database);
  return { ...kyselyWriteLog(engine.db), close: () => engine.close() };
}
