import { redactUrl } from '../../vocabulary/redact-url.js';
import { DatabaseUnreachableError } from '../database-unreachable-error.js';

/** A PostgreSQL URL fit for messages and output: its password hidden. */
export const hidePassword = (url: string): string => redactUrl(url, 'password', 'the PostgreSQL URL');

/** The server at `url` could not be reached; `3D000` (no such database) is a missing mirror. */
export const postgresUnreachable = (url: string, cause: unknown): DatabaseUnreachableError =>
  new DatabaseUnreachableError(hidePassword(url), cause, (cause as { code?: unknown } | null)?.code === '3D000');
