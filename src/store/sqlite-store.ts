import { resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { Store } from '../sync/store-port.js';
import type { Database } from './db-schema.js';
import type { StoreEngine } from './engine.js';
import { KyselyStore } from './kysely-store.js';
import { openMigratedDatabase } from './migrate.js';

/** SQLite's limit on bound parameters per statement (SQLITE_MAX_VARIABLE_NUMBER since 3.32). */
const SQLITE_MAX_PARAMETERS = 32766;

/** Per database file, the tail of the write transactions queued in this process. */
const writeQueues = new Map<string, Promise<unknown>>();

/** Runs `fn` after every write transaction queued before it on the same file, in this process. */
function queuedOn(file: string): <T>(fn: () => Promise<T>) => Promise<T> {
  return (fn) => {
    const prior = writeQueues.get(file) ?? Promise.resolve();
    const mine = prior.then(fn, fn);
    const tail = mine.catch(() => undefined);
    writeQueues.set(file, tail);
    void tail.then(() => {
      if (writeQueues.get(file) === tail) writeQueues.delete(file);
    }); // the queue's own bookkeeping: nothing to wait for
    return mine;
  };
}

/** The SQLite engine over an open connection; closing it destroys Kysely and closes the handle. */
export function sqliteEngine(db: Kysely<Database>, raw: BetterSqlite3.Database): StoreEngine {
  let closing: Promise<void> | undefined;
  return {
    name: 'sqlite',
    db,
    begin: 'begin immediate',
    exclusive: queuedOn(raw.name === ':memory:' ? `:memory:${Math.random()}` : resolve(raw.name)),
    maxParameters: SQLITE_MAX_PARAMETERS,
    close() {
      closing ??= (async () => {
        await db.destroy();
        // Kysely closes the connection only if it ever ran a query through its driver.
        if (raw.open) raw.close();
      })();
      return closing;
    },
  };
}

/** Opens (creating when missing) the mirror at `path` and brings its schema to the latest migration. */
export async function openSqliteStore(path: string): Promise<Store> {
  const { db, raw } = await openMigratedDatabase(path);
  return new KyselyStore(sqliteEngine(db, raw));
}
