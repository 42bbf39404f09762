import type { Dialect } from '../dialect.js';
import { postgresBackupRefused } from './backup-refused.js';
import { postgresCatalog } from './postgres-catalog.js';
import { postgresChangeHorizon } from './postgres-change-horizon.js';
import { connectPostgres, postgresEngine } from './postgres-engine.js';
import { openPostgresQuery } from './postgres-query.js';
import { openPostgresReads } from './postgres-reads.js';
import { searchPostgres } from './postgres-search.js';
import { hidePassword } from './postgres-unreachable.js';

/**
 * The PostgreSQL database at `url`: a pool of four connections for a writer, one for a reader (every transaction
 * read-only); whether it exists is the server's to say, when asked.
 */
export function postgresDialect(url: string): Dialect {
  return {
    shown: hidePassword(url),
    missing: () => false,
    openWritable: () => connectPostgres(url),
    openReader: async () => {
      const engine = await connectPostgres(url, { maxConnections: 1, readOnly: true });
      return {
        db: engine.db,
        changeHorizon: postgresChangeHorizon,
        close: () => engine.close(),
        backup: async () => {
          throw postgresBackupRefused();
        },
      };
    },
    openReadOnly: () => postgresEngine(url, { maxConnections: 1, readOnly: true }),
    query: (sqlText, params, timeoutMs) => openPostgresQuery(url, sqlText, params, timeoutMs),
    catalog: () => postgresCatalog(url),
    openReads: (o) => openPostgresReads(url, o.timeoutMs, o.connections ?? 4),
    search: (q) => searchPostgres(url, q),
    assertBackupable: () => {
      throw postgresBackupRefused();
    },
  };
}
