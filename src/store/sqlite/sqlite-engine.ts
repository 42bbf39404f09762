import { statSync } from 'node:fs';
import { closeOnce } from '../../close-all.js';
import type { MirrorConnection, StoreEngine } from '../engine.js';
import type { OpenDatabase } from './open-database.js';
import type { WriteQueue } from './write-queue.js';

/** SQLite's limit on bound parameters per statement (SQLITE_MAX_VARIABLE_NUMBER since 3.32). */
const SQLITE_MAX_PARAMETERS = 32766;

/** The connection as a `MirrorConnection`: closing it destroys Kysely and closes the handle. */
export function sqliteConnection({ db, raw }: OpenDatabase): MirrorConnection {
  return {
    db,
    close: closeOnce(async () => {
      await db.destroy();
      // Kysely closes the connection only if it ever ran a query through its driver.
      if (raw.open) raw.close();
    }),
  };
}

/** Which file a path names now (throws ENOENT when it is gone). */
const identity = (path: string): string => {
  const st = statSync(path);
  return `${st.dev}:${st.ino}`;
};

/**
 * The SQLite engine over an open connection to `path`: its write transactions begin immediate and run one at a time
 * through `writes` (shared by every connection of one dialect); a file removed or replaced under it is noticed.
 */
export function sqliteEngine(path: string, opened: OpenDatabase, writes: WriteQueue): StoreEngine {
  const file = path === ':memory:' ? null : identity(path);
  return {
    ...sqliteConnection(opened),
    begin: 'begin immediate',
    exclusive: (fn) => writes.run(fn),
    maxParameters: SQLITE_MAX_PARAMETERS,
    assertSameMirror: () => {
      if (file !== null && identity(path) !== file) throw new Error('the database file was replaced');
    },
  };
}
