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
