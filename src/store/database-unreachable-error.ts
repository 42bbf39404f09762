import { ConfigError } from '../errors.js';

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
