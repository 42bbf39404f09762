import { ConfigError } from '../../errors.js';

/** A PostgreSQL URL fit for messages and output: its password hidden. */
export const hidePassword = (url: string): string => {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'the PostgreSQL URL';
  }
};

/**
 * A PostgreSQL mirror that cannot be reached (`US_CONFIG`, as a SQLite file that cannot be opened): `cannot connect
 * to postgres://…: <the server's or the network's reason>`, the password hidden.
 */
export class DatabaseUnreachableError extends ConfigError {
  /** The server answered that the database does not exist (what a missing SQLite file is to that engine). */
  readonly missing: boolean;
  constructor(url: string, cause: unknown) {
    super(`cannot connect to ${hidePassword(url)}: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.missing = (cause as { code?: unknown } | null)?.code === '3D000';
  }
}
