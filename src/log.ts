import pino, { type Logger } from 'pino';

/**
 * Redaction paths, set once. Header names are always lower case; anything key-like is censored wherever
 * the code logs it under these names.
 */
export const REDACT_PATHS = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'err.headers.authorization',
  'apiKey',
  'key',
  '*.apiKey',
  '*.key',
  'token',
  '*.token',
  // Operations (issue 6): the other usual names for secrets, top level and one level down, and header objects
  // nested one level (e.g. `{ req: { headers } }`, `{ request: { headers } }`).
  'Authorization',
  'headers.Authorization',
  '*.authorization',
  '*.Authorization',
  '*.headers.authorization',
  '*.headers.Authorization',
  'headers.cookie',
  '*.headers.cookie',
  'headers["x-api-key"]',
  '*.headers["x-api-key"]',
  'api_key',
  '*.api_key',
  'apikey',
  '*.apikey',
  'accessToken',
  '*.accessToken',
  'dashboardToken',
  '*.dashboardToken',
  'secret',
  '*.secret',
  'password',
  '*.password',
];

/** The process logger: JSON lines on stderr, so stdout stays free for `--json` output. */
export function createLogger(opts: { level?: string; destination?: NodeJS.WritableStream } = {}): Logger {
  return pino(
    {
      level: opts.level ?? process.env.LOG_LEVEL ?? 'info',
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { pid: process.pid },
    },
    (opts.destination as pino.DestinationStream | undefined) ?? pino.destination(2),
  );
}

export type { Logger };
