import { existsSync } from 'node:fs';
import { text } from 'node:stream/consumers';
import BetterSqlite3 from 'better-sqlite3';
import { databasePath } from '../config/database-path.js';
import { ConfigError, UnderstudyError, UsageError } from '../errors.js';
import { formatGrid } from './format-table.js';
import { parseFlags } from './parse-flags.js';

const HELP = `usage: understudy sql [--db FILE] [--json|--csv] [-p NAME VALUE]... ["SELECT …" | -]

Runs one read-only SQL statement over the mirror and prints its rows. The SQL comes from the argument, or from
standard input when the argument is "-" or absent. The database is opened read-only; statements that write
(INSERT, UPDATE, DELETE, DROP, ATTACH, writing PRAGMAs, VACUUM …) are refused.

  --db FILE          SQLite file of the mirror (default: $UNDERSTUDY_DB, else ./data/understudy.db)
  --json             print a JSON array of row objects
  --csv              print CSV (RFC 4180) with a header row
  -p, --param N V    bind the named parameter :N (or @N, $N) to the string V (repeatable)
  --max-width N      truncate table cells to N characters (default 60; never in --json/--csv)
`;

const FLAGS = {
  db: { type: 'string' },
  json: { type: 'boolean' },
  csv: { type: 'boolean' },
  'max-width': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Statements SQLite calls read-only although they change the connection or rebuild the file. */
const REFUSED_VERBS = new Set(['ATTACH', 'DETACH', 'VACUUM', 'REINDEX', 'ANALYZE']);

export interface SqlIo {
  readonly stdout: (s: string) => void;
  readonly stdin: () => Promise<string>;
  readonly env: NodeJS.ProcessEnv;
}

const defaultIo: SqlIo = {
  stdout: (s) => {
    process.stdout.write(s);
  },
  stdin: () => text(process.stdin),
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

/** The first keyword of a statement, past comments and whitespace. */
export function leadingVerb(sqlText: string): string {
  const s = sqlText.replace(/^(\s+|--[^\n]*(\n|$)|\/\*[\s\S]*?\*\/)*/, '');
  return (/^[A-Za-z]+/.exec(s)?.[0] ?? '').toUpperCase();
}

/** Throws `US_READ_ONLY` unless the prepared statement only reads. */
export function assertReadOnly(stmt: { readonly readonly: boolean }, sqlText: string): void {
  const verb = leadingVerb(sqlText);
  if (stmt.readonly && !REFUSED_VERBS.has(verb)) return;
  const what =
    verb === '' ? 'this statement is' : verb === 'WITH' ? 'WITH … statements that write are' : `${verb} statements are`;
  throw new UnderstudyError('US_READ_ONLY', `sql is read-only: ${what} refused`);
}

/** A readable aligned table: header, rule, rows (numbers right-aligned), then `(N rows)`. */
export const formatSqlTable = (columns: readonly string[], rows: readonly unknown[][], maxWidth = 60): string =>
  `${formatGrid(columns, rows, { maxWidth, footer: true })}\n`;

const csvField = (v: unknown): string => {
  if (v === null || v === undefined) return '';
  const s = Buffer.isBuffer(v) ? v.toString('base64') : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

/** RFC 4180: CRLF line ends, fields with commas, quotes or line breaks quoted, quotes doubled. */
export function formatCsv(columns: readonly string[], rows: readonly unknown[][]): string {
  return [columns, ...rows].map((r) => `${r.map(csvField).join(',')}\r\n`).join('');
}

const jsonValue = (v: unknown): unknown => {
  if (Buffer.isBuffer(v)) return v.toString('base64');
  if (typeof v === 'bigint') return Number(v);
  return v;
};

/** A JSON array of row objects (one per line), keyed by column name. */
export function formatJson(columns: readonly string[], rows: readonly unknown[][]): string {
  if (rows.length === 0) return '[]\n';
  const objs = rows.map((r) => JSON.stringify(Object.fromEntries(columns.map((c, i) => [c, jsonValue(r[i])]))));
  return `[\n${objs.join(',\n')}\n]\n`;
}

/** `understudy sql`: one read-only statement over the mirror; exit 0, or an `UnderstudyError`. */
export async function sqlCommand(argv: string[], io: SqlIo = defaultIo): Promise<number> {
  const { rest, params } = takeParams(argv);
  const { values, positionals } = parseFlags(rest, FLAGS, true);
  if (values.help) {
    io.stdout(HELP);
    return 0;
  }
  if (values.json && values.csv) throw new UsageError('--json and --csv exclude each other');
  if (positionals.length > 1) throw new UsageError('give one SQL statement (quote it), or "-" to read it from stdin');
  const maxWidth = values['max-width'] === undefined ? 60 : Number(values['max-width']);
  if (!Number.isInteger(maxWidth) || maxWidth < 2) throw new UsageError('--max-width must be an integer >= 2');

  const arg = positionals[0];
  const sqlText = arg === undefined || arg === '-' ? await io.stdin() : arg;
  if (sqlText.trim() === '') throw new UsageError('no SQL given (pass it as an argument or on stdin)');

  const path = databasePath(null, io.env, values.db);
  if (!existsSync(path))
    throw new ConfigError(`database ${path} does not exist (run \`understudy sync\` first or pass --db)`);
  let db: BetterSqlite3.Database;
  try {
    db = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new ConfigError(`cannot open database ${path}: ${(err as Error).message}`, { cause: err });
  }
  try {
    db.pragma('busy_timeout = 5000');
    // Belt and braces: the connection is read-only already; query_only also refuses writes to temp tables.
    db.pragma('query_only = ON');
    let stmt: BetterSqlite3.Statement;
    try {
      stmt = db.prepare(sqlText);
    } catch (err) {
      throw new UsageError(`sql: ${(err as Error).message}`, { cause: err });
    }
    assertReadOnly(stmt, sqlText);
    const bind = Object.keys(params).length > 0 ? [params] : [];
    let columns: string[] = [];
    let rows: unknown[][] = [];
    try {
      if (stmt.reader) {
        columns = stmt.columns().map((c) => c.name);
        rows = stmt.raw(true).all(...bind) as unknown[][];
      } else {
        stmt.run(...bind);
      }
    } catch (err) {
      throw new UnderstudyError('US_STORE', `sql: ${(err as Error).message}`, { cause: err });
    }
    if (values.json) io.stdout(formatJson(columns, rows));
    else if (values.csv) io.stdout(formatCsv(columns, rows));
    else io.stdout(formatSqlTable(columns, rows, maxWidth));
    return 0;
  } finally {
    db.close();
  }
}
