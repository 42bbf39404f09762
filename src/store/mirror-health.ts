import { statSync } from 'node:fs';
import type { Kysely } from 'kysely';
import type { Database } from './db-schema.js';
import { openDatabase } from './open-database.js';
import { isPostgresUrl, postgresEngine } from './postgres-engine.js';

/** The last successful sync of one tenant and collection (any variant); `at` in epoch milliseconds. */
export interface LastSyncSuccess {
  readonly tenant: string;
  readonly collection: string;
  readonly at: number;
}

/** What operations read of the mirror: readiness and the freshness metrics. */
export interface MirrorHealth {
  /** The migrations applied, by name (empty when none); throws when the mirror is gone or unreadable. */
  appliedMigrations(): Promise<string[]>;
  /** The last successful sync of each tenant and collection recorded in the mirror (any variant, any worker). */
  lastSuccesses(): Promise<LastSyncSuccess[]>;
}

const missingTable = (err: unknown): boolean => /no such table|does not exist/i.test((err as Error)?.message ?? '');

/**
 * Health over the process' own connection (no second handle on the mirror), on either engine. For a SQLite file,
 * `file` is its path: a file removed or replaced under the process is noticed (`appliedMigrations` checks that the
 * path is still the file the connection opened).
 */
export function mirrorHealth(db: Kysely<Database>, file: string | null): MirrorHealth {
  const loose = db as unknown as Kysely<{ kysely_migration: { name: string } }>;
  const identity = (path: string): string => {
    const st = statSync(path); // throws ENOENT when the file is gone
    return `${st.dev}:${st.ino}`;
  };
  const opened = file === null || file === ':memory:' ? null : identity(file);
  return {
    async appliedMigrations() {
      if (opened !== null && file !== null && identity(file) !== opened)
        throw new Error('the database file was replaced');
      try {
        const rows = await loose.selectFrom('kysely_migration').select('name').orderBy('name').execute();
        return rows.map((r) => r.name);
      } catch (err) {
        if (missingTable(err)) return [];
        throw err;
      }
    },
    async lastSuccesses() {
      const rows = await db
        .selectFrom('sync_state')
        .select(['tenant', 'collection', (eb) => eb.fn.max('last_success_at').as('at')])
        .where('last_success_at', 'is not', null)
        .groupBy(['tenant', 'collection'])
        .execute();
      return rows
        .map((r) => ({ tenant: r.tenant, collection: r.collection, at: Date.parse(String(r.at)) }))
        .filter((r) => Number.isFinite(r.at));
    },
  };
}

/**
 * Health read through a read-only connection of its own per call (tools that hold no connection), for a SQLite
 * path or a PostgreSQL URL. A missing SQLite file is an error, never created.
 */
export function fileMirrorHealth(database: string): MirrorHealth {
  const withDb = async <T>(fn: (h: MirrorHealth) => Promise<T>): Promise<T> => {
    if (isPostgresUrl(database)) {
      const engine = postgresEngine(database, { maxConnections: 1 });
      try {
        return await fn(mirrorHealth(engine.db, null));
      } finally {
        await engine.close();
      }
    }
    const { db, raw } = openDatabase(database, { readonly: true });
    try {
      return await fn(mirrorHealth(db, null));
    } finally {
      await db.destroy();
      if (raw.open) raw.close();
    }
  };
  return {
    appliedMigrations: () => withDb((h) => h.appliedMigrations()),
    lastSuccesses: () => withDb((h) => h.lastSuccesses()),
  };
}
