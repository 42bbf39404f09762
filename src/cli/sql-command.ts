import { fork } from 'node:child_process';
import { text } from 'node:stream/consumers';
import { fileURLToPath } from 'node:url';
import { databasePath } from '../config/database-path.js';
import { UnderstudyError, UsageError } from '../errors.js';
import { parseFlags } from './parse-flags.js';
import type { SqlChildResult } from './sql-child.js';
import { type SqlFormat, type SqlJob, streamSql } from './sql-stream.js';

export { assertReadOnly, leadingVerb } from '../store/read-only-query.js';
export { formatCsv } from './sql-stream.js';

const HELP = `usage: understudy sql [--db FILE] [--json|--csv|--nl] [-p NAME VALUE]... [--timeout S] ["SELECT …" | -]

Runs one read-only SQL statement over the mirror and prints its rows as they are read (memory stays flat
however many rows). The SQL comes from the argument, or from standard input when the argument is "-" or
absent (piped). The database is opened read-only; statements that write (INSERT, UPDATE, DELETE, DROP, ATTACH,
writing PRAGMAs, VACUUM …) are refused.

  --db FILE          SQLite file of the mirror (default: $UNDERSTUDY_DB, else ./data/understudy.db)
  --json             print a JSON array of row objects
  --csv              print CSV (RFC 4180) with a header row
  --nl               print one JSON object per line (NDJSON)
  -p, --param N V    bind the named parameter :N (or @N, $N) to the string V (repeatable)
  --max-width N      truncate table cells to N characters (default 60; never in --json/--csv/--nl);
                     column widths come from the first 1000 rows
  --timeout S        stop the statement after S seconds (default: none): exit 1 with a one-line reason
`;

const FLAGS = {
  db: { type: 'string' },
  json: { type: 'boolean' },
  csv: { type: 'boolean' },
  nl: { type: 'boolean' },
  'max-width': { type: 'string' },
  timeout: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export interface SqlIo {
  readonly stdout: (s: string) => void;
  /** Where usage goes when there is nothing to run; default nowhere. */
  readonly stderr?: (s: string) => void;
  readonly stdin: () => Promise<string>;
  /** Whether stdin is a terminal: then no statement means usage, not a wait for input. Default false. */
  readonly stdinIsTTY?: boolean;
  readonly env: NodeJS.ProcessEnv;
}

const defaultIo: SqlIo = {
  // Writes to files and pipes are synchronous on Linux, so rows never pile up in memory behind stdout.
  stdout: (s) => {
    process.stdout.write(s);
  },
  stderr: (s) => {
    process.stderr.write(s);
  },
  stdin: () => text(process.stdin),
  get stdinIsTTY() {
    return process.stdin.isTTY === true;
  },
  env: process.env,
};

/** Pulls `-p NAME VALUE` / `--param NAME VALUE` pairs out of argv (util.parseArgs takes one value per flag). */
function takeParams(argv: readonly string[]): { rest: string[]; params: Record<string, string> } {
  const rest: string[] = [];
  const params: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    if (a === '-p' || a === '--param') {
      const name = argv[i + 1];
      const value = argv[i + 2];
      if (name === undefined || value === undefined) throw new UsageError(`${a} needs a name and a value`);
      params[name.replace(/^[:@$]/, '')] = value;
      i += 2;
    } else rest.push(a);
  }
  return { rest, params };
}

/** `understudy sql`: one read-only statement over the mirror; exit 0, or an `UnderstudyError`. */
export async function sqlCommand(argv: string[], io: SqlIo = defaultIo): Promise<number> {
  const { rest, params } = takeParams(argv);
  const { values, positionals } = parseFlags(rest, FLAGS, true);
  if (values.help) {
    io.stdout(HELP);
    return 0;
  }
  if ([values.json, values.csv, values.nl].filter(Boolean).length > 1)
    throw new UsageError('--json, --csv and --nl exclude each other');
  if (positionals.length > 1) throw new UsageError('give one SQL statement (quote it), or "-" to read it from stdin');
  const maxWidth = values['max-width'] === undefined ? 60 : Number(values['max-width']);
  if (!Number.isInteger(maxWidth) || maxWidth < 2) throw new UsageError('--max-width must be an integer >= 2');

  const format: SqlFormat = values.json ? 'json' : values.csv ? 'csv' : values.nl ? 'nl' : 'table';
  let timeoutS: number | null = null;
  if (values.timeout !== undefined) {
    timeoutS = Number(values.timeout);
    // setTimeout fires at once past 2^31 - 1 ms (about 24.8 days): refuse rather than stop every statement.
    if (!Number.isFinite(timeoutS) || timeoutS <= 0 || timeoutS * 1000 > 2 ** 31 - 1)
      throw new UsageError('--timeout must be a number of seconds > 0 (at most 2147483)');
  }

  const arg = positionals[0];
  if (arg === undefined && io.stdinIsTTY) {
    // Nothing to read: waiting on a terminal for a statement nobody said they would type looks like a hang.
    io.stderr?.(HELP);
    return 2;
  }
  const sqlText = arg === undefined || arg === '-' ? await io.stdin() : arg;
  if (sqlText.trim() === '') throw new UsageError('no SQL given (pass it as an argument or on stdin)');

  const job: SqlJob = { path: databasePath(null, io.env, values.db), sqlText, params, format, maxWidth };
  if (timeoutS === null) await streamSql(job, io.stdout);
  else await streamSqlInChild(job, timeoutS, io);
  return 0;
}

/**
 * Runs `streamSql` in a child process (src/cli/sql-child.ts) and SIGKILLs it after `timeoutS`: a statement stuck
 * in SQLite cannot be interrupted any other way. Its output is forwarded to `io.stdout` as it comes.
 */
async function streamSqlInChild(job: SqlJob, timeoutS: number, io: SqlIo): Promise<void> {
  const child = fork(fileURLToPath(new URL('./sql-child.js', import.meta.url)), [], {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  let result: SqlChildResult | null = null;
  let timedOut = false;
  child.on('message', (m: SqlChildResult) => {
    result = m;
  });
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => io.stdout(chunk));
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, timeoutS * 1000);
  try {
    child.send(job);
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', () => resolve());
    });
  } finally {
    clearTimeout(timer);
  }
  if (timedOut)
    throw new UnderstudyError(
      'US_TIMEOUT',
      `stopped after ${timeoutS} s (--timeout): the statement was still running; rows printed so far are incomplete`,
    );
  const r = result as SqlChildResult | null;
  if (r === null) throw new UnderstudyError('US_STORE', `sql: the query process ended without an answer`);
  if (!r.ok) throw new UnderstudyError(r.code, r.message);
}
