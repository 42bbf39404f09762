import { ConfigError, hasCode } from '../errors.js';

/**
 * A mirror's database server that cannot be reached (`US_CONFIG`, as a SQLite file that cannot be opened), whatever
 * the engine: `cannot connect to <the setting, password hidden>: <the server's or the network's reason>`.
 */
export class DatabaseUnreachableError extends ConfigError {
  /**
   * @param shown the database setting as messages show it (`Dialect.shown`: a URL's password hidden)
   * @param missing the server answered that the database does not exist (what a missing SQLite file is to SQLite)
   */
  constructor(
    shown: string,
    cause: unknown,
    readonly missing: boolean,
  ) {
    super(`cannot connect to ${shown}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/**
 * Whether `err` says the mirror's database does not exist on its server (`US_CONFIG`, with `missing`): what a
 * missing SQLite file is to SQLite (`status --check` reports it so).
 */
export const databaseMissing = (err: unknown): boolean =>
  hasCode(err, 'US_CONFIG') && (err as { readonly missing?: unknown }).missing === true;
