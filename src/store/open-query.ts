import { dialectFor } from './dialect.js';
import type { ReadOnlyQuery } from './read-only-query.js';

/**
 * One read-only statement of the user's (`understudy sql`) over the mirror `database` names: a PostgreSQL URL, or a
 * SQLite file. See `Dialect.query` for what it refuses.
 */
export const openQuery = (
  database: string,
  sqlText: string,
  params: Readonly<Record<string, string>>,
  timeoutMs?: number,
): Promise<ReadOnlyQuery> => dialectFor(database).query(sqlText, params, timeoutMs);
