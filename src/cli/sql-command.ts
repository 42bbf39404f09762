import { fork } from 'node:child_process';
import { text } from 'node:stream/consumers';
import { fileURLToPath } from 'node:url';
import { databasePath } from '../config/database-path.js';
import { loadConfigFile } from '../config/load-config.js';
import { UnderstudyError, UsageError } from '../errors.js';
import { helpText } from './command-help.js';
import { parseFlags } from './parse-flags.js';
import { SQL_SPEC } from './specs/sql-spec.js';
import type { SqlChildResult } from './sql-child.js';
import { dotCommand, schemaText } from './sql-schema.js';
import { type SqlFormat, type SqlJob, streamSql } from './sql-stream.js';

export { assertReadOnly, leadingVerb } from '../store/read-only-query.js';
export { formatCsv } from './sql-stream.js';

export interface SqlIo {
  /** A promise when the writer wants the next chunk to wait (backpressure, or to learn of a closed pipe). */
  readonly stdout: (s: string) => void | Promise<void>;
  /** Where usage goes when there is nothing to run; default nowhere. */
  readonly stderr?: (s: string) => void;
  readonly stdin: () => Promise<string>;
  /** Whether stdin is a terminal: then no statement means usage, not a wait for input. Default false. */
  readonly stdinIsTTY?: boolean;
  readonly env: NodeJS.ProcessEnv;
}

const defaultIo: SqlIo = {
  // Each chunk is waited for: rows never pile up in memory behind stdout, and a reader that went away (`| head`)
  // stops the statement at once (EPIPE, which the CLI ends quietly on) instead of after its last row.
  stdout: (s) =>
    new Promise<void>((resolve, reject) => {
      process.stdout.write(s, (err) => (err ? reject(err) : resolve()));
    }),
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

type SqlValues = ReturnType<typeof parseFlags<(typeof SQL_SPEC)['flags']>>['values'];

/** The output format and cell width the flags ask for (the parser refused formats that contradict each other). */
function outputOf(values: SqlValues, positionals: readonly string[]): { format: SqlFormat; maxWidth: number } {
  if (positionals.length > 1) throw new UsageError('give one SQL statement (quote it), or "-" to read it from stdin');
  const maxWidth = values['max-width'];
  const format: SqlFormat = values.json ? 'json' : values.csv ? 'csv' : values.nl ? 'nl' : values.raw ? 'raw' : 'table';
  return { format, maxWidth };
}

/** `understudy sql`: one read-only statement over the mirror; exit 0, or an `UnderstudyError`. */
export async function sqlCommand(argv: string[], io: SqlIo = defaultIo): Promise<number> {
  const { rest, params } = takeParams(argv);
  const { values, positionals, help } = parseFlags(rest, SQL_SPEC);
  if (help) {
    await io.stdout(helpText(SQL_SPEC));
    return 0;
  }
  const { format, maxWidth } = outputOf(values, positionals);
  const config = values.config ? loadConfigFile(values.config) : null;
  const path = () => databasePath(config, io.env, values.db);
  // --quiet keeps what a machine format asks for (--json, --csv, --nl, --raw) and drops the table made for people.
  if (values.quiet && format === 'table') io = { ...io, stdout: () => undefined };
  if (values.tables || values.schema) {
    if (values.tables && positionals.length > 0) throw new UsageError('--tables takes no statement');
    const table = positionals[0];
    const req = values.tables ? { kind: 'tables' as const } : { kind: 'schema' as const, ...(table ? { table } : {}) };
    await io.stdout(await schemaText(path(), req, format));
    return 0;
  }
  const timeoutS = values.timeout ?? null;
  const arg = positionals[0];
  if (arg === undefined && io.stdinIsTTY) {
    // Nothing to read: waiting on a terminal for a statement nobody said they would type looks like a hang.
    io.stderr?.(helpText(SQL_SPEC));
    return 2;
  }
  const sqlText = arg === undefined || arg === '-' ? await io.stdin() : arg;
  if (sqlText.trim() === '') throw new UsageError('no SQL given (pass it as an argument or on stdin)');
  const dot = dotCommand(sqlText);
  if (dot) {
    await io.stdout(await schemaText(path(), dot, format));
    return 0;
  }
  const timeoutMs = timeoutS === null ? {} : { timeoutMs: Math.round(timeoutS * 1000) };
  const job: SqlJob = { path: path(), sqlText, params, format, maxWidth, ...timeoutMs };
  const warn = (line: string) => io.stderr?.(`understudy sql: ${line}\n`);
  if (timeoutS === null) await streamSql(job, io.stdout, warn);
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
  let writeFailure: unknown = null;
  child.stdout?.on('data', (chunk: string) => {
    const written = io.stdout(chunk);
    if (!(written instanceof Promise)) return;
    // The child waits while its pipe is full: memory stays flat. A reader gone away stops it.
    child.stdout?.pause();
    written.then(
      () => child.stdout?.resume(),
      (err: unknown) => {
        writeFailure ??= err;
        child.kill('SIGKILL');
      },
    );
  });
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
  if (writeFailure) throw writeFailure;
  if (timedOut)
    throw new UnderstudyError(
      'US_TIMEOUT',
      `stopped after ${timeoutS} s (--timeout): the statement was still running; rows printed so far are incomplete`,
    );
  const r = result as SqlChildResult | null;
  if (r === null) throw new UnderstudyError('US_STORE', 'the query process ended without an answer');
  if (!r.ok) throw new UnderstudyError(r.code, r.message);
}
