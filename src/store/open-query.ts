import { isPostgresUrl } from './postgres-engine.js';
import { openPostgresQuery } from './postgres-read-only-query.js';
import { openReadOnlyQuery, type ReadOnlyQuery } from './read-only-query.js';

/** One read-only statement over the mirror `database` names: a PostgreSQL URL, or a SQLite file. */
export const openQuery = async (
  database: string,
  sqlText: string,
  params: Readonly<Record<string, string>>,
  timeoutMs?: number,
): Promise<ReadOnlyQuery> =>
  isPostgresUrl(database)
    ? openPostgresQuery(database, sqlText, params, timeoutMs)
    : openReadOnlyQuery(database, sqlText, params);
