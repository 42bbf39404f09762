import { statSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';

/** The last successful sync of one tenant and collection (any variant); `at` in epoch milliseconds. */
export interface LastSyncSuccess {
  readonly tenant: string;
  readonly collection: string;
  readonly at: number;
}

/** What operations read of the mirror: readiness and the freshness metrics. */
export interface MirrorHealth {
  /** The migrations applied, by name (empty when none); throws when the file is gone or unreadable. */
  appliedMigrations(): Promise<string[]>;
  /** The last successful sync of each tenant and collection recorded in the mirror (any variant, any worker). */
  lastSuccesses(): Promise<LastSyncSuccess[]>;
}

/** The part of a better-sqlite3 connection these queries use. */
type SqliteReader = Pick<BetterSqlite3.Database, 'prepare'>;

const migrationsOf = (db: SqliteReader): string[] => {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'kysely_migration'").get();
  if (!table) return [];
  return (db.prepare('SELECT name FROM kysely_migration ORDER BY name').all() as { name: string }[]).map((r) => r.name);
};

const lastSuccessesOf = (db: SqliteReader): LastSyncSuccess[] =>
  (
    db
      .prepare(
        `SELECT tenant, collection, max(last_success_at) AS at FROM sync_state
         WHERE last_success_at IS NOT NULL GROUP BY tenant, collection`,
      )
      .all() as { tenant: string; collection: string; at: string }[]
  )
    .map((r) => ({ tenant: r.tenant, collection: r.collection, at: Date.parse(r.at) }))
    .filter((r) => Number.isFinite(r.at));

/**
 * Health over the process' own connection (no second handle on the file). A file removed or replaced under the
 * process is still noticed: `appliedMigrations` checks that `path` is the file the connection opened.
 */
export function sqliteMirrorHealth(raw: SqliteReader, path: string): MirrorHealth {
  const identity = (): string => {
    const st = statSync(path); // throws ENOENT when the file is gone
    return `${st.dev}:${st.ino}`;
  };
  const opened = path === ':memory:' ? null : identity();
  return {
    async appliedMigrations() {
      if (opened !== null && identity() !== opened) throw new Error('the database file was replaced');
      return migrationsOf(raw);
    },
    async lastSuccesses() {
      return lastSuccessesOf(raw);
    },
  };
}

/** Health read through a read-only connection of its own per call (tools that hold no connection). */
export function fileMirrorHealth(path: string): MirrorHealth {
  const withDb = <T>(fn: (db: SqliteReader) => T): T => {
    const db = new BetterSqlite3(path, { readonly: true, fileMustExist: true, timeout: 1000 });
    try {
      return fn(db);
    } finally {
      db.close();
    }
  };
  return {
    appliedMigrations: async () => withDb(migrationsOf),
    lastSuccesses: async () => withDb(lastSuccessesOf),
  };
}
