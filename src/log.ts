import pino, { type Logger } from 'pino';
import { prettyFactory } from 'pino-pretty';

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

/** The levels `LOG_LEVEL` may name, lowest first. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

export interface LoggerOptions {
  /** Default `LOG_LEVEL`, else `info`. */
  readonly level?: string;
  /** JSON lines to this stream instead of stderr (tests). */
  readonly destination?: NodeJS.WritableStream;
  /**
   * Human-readable, coloured lines (pino-pretty) instead of JSON. Default: when stderr is a terminal and no
   * `destination` is given. Colour unless `NO_COLOR` is set.
   */
  readonly pretty?: boolean;
  /** Where pretty lines go (a progress display prints them above its bars); default stderr. */
  readonly write?: (line: string) => void;
}

/**
 * The process logger: JSON lines on stderr with ISO times (stdout stays free for `--json` output), or, on a
 * terminal, pretty coloured lines through pino-pretty: formatted in this process, synchronously, so a line is on
 * the screen before the next progress redraw and never spliced into it.
 */
export function createLogger(opts: LoggerOptions = {}): Logger {
  const options: pino.LoggerOptions = {
    level: opts.level ?? (process.env.LOG_LEVEL || 'info'),
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  const pretty = opts.pretty ?? (opts.destination === undefined && process.stderr.isTTY === true);
  if (pretty) {
    const format = prettyFactory({
      colorize: !process.env.NO_COLOR,
      translateTime: 'SYS:yyyy-mm-dd HH:MM:ss.l',
      ignore: 'pid,hostname',
      // One line per entry: readable above a progress display, and greppable in a terminal's scrollback.
      singleLine: true,
      // Level names right-aligned in five columns (` INFO`, `DEBUG`), so the messages line up.
      customPrettifiers: {
        level: (value, _key, _log, { labelColorized }) => {
          const label = pino.levels.labels[Number(value)]?.toUpperCase();
          return label ? labelColorized.replace(label, label.padStart(5)) : labelColorized;
        },
      },
    });
    const write = opts.write ?? ((line: string) => void process.stderr.write(line));
    // A line that cannot be prettified is printed as it came: logging never breaks the work it reports on.
    const pretty = (chunk: string): string => {
      try {
        return format(chunk);
      } catch {
        return chunk;
      }
    };
    return pino(options, { write: (chunk: string) => write(pretty(chunk)) });
  }
  return pino(options, (opts.destination as pino.DestinationStream | undefined) ?? pino.destination(2));
}

export type { Logger };
