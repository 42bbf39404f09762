import type { Kysely } from 'kysely';
import { dialectFor } from './dialect.js';
import type { MirrorConnection, StoreEngine } from './engine.js';

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
 * Health over the process' own connection (no second handle on the mirror), on either engine. A mirror removed or
 * replaced under the process (a SQLite file) is noticed where the engine can tell (`assertSameMirror`).
 */
export function mirrorHealth(connection: MirrorConnection & Pick<StoreEngine, 'assertSameMirror'>): MirrorHealth {
  const { db } = connection;
  const loose = db as unknown as Kysely<{ kysely_migration: { name: string } }>;
  return {
    async appliedMigrations() {
      connection.assertSameMirror?.();
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
  const dialect = dialectFor(database);
  const withDb = async <T>(fn: (h: MirrorHealth) => Promise<T>): Promise<T> => {
    const connection = dialect.openReadOnly();
    try {
      return await fn(mirrorHealth(connection));
    } finally {
      await connection.close();
    }
  };
  return {
    appliedMigrations: () => withDb((h) => h.appliedMigrations()),
    lastSuccesses: () => withDb((h) => h.lastSuccesses()),
  };
}
