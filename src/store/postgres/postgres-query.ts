import pg from 'pg';
import Cursor from 'pg-cursor';
import { isUnderstudyError, UnderstudyError, UsageError } from '../../errors.js';
import { type ColumnKind, leadingVerb, type ReadOnlyQuery } from '../read-only-query.js';
import { JSON_COLUMNS } from '../schema-catalog.js';
import { poolConfig } from './pool-config.js';
import { postgresUnreachable } from './postgres-unreachable.js';

/** Statements that only read (a read-only transaction refuses the rest anyway; this says so before sending). */
const READING_VERBS = new Set(['SELECT', 'WITH', 'VALUES', 'TABLE', 'EXPLAIN', 'SHOW']);
const BATCH = 500;
const { builtins } = pg.types;
const NUMBER_TYPES = new Set<number>([builtins.INT8, builtins.NUMERIC]);
const JSON_TYPES = new Set<number>([builtins.JSON, builtins.JSONB]);
const TEXT_TYPES = new Set<number>([builtins.TEXT, builtins.VARCHAR]);

/**
 * `:name` (also `@name`, `$name`) placeholders as PostgreSQL's `$1`, `$2`, … for the names in `params` only, outside
 * string literals, quoted identifiers, comments and dollar-quoted strings; `::` casts and operators such as `@>` are
 * left alone. Returns the SQL and the values in order.
 */
export function positionalParams(
  sqlText: string,
  params: Readonly<Record<string, string>>,
): { text: string; values: string[] } {
  const values: string[] = [];
  const slot = new Map<string, number>();
  const token =
    /'(?:[^']|'')*'?|"(?:[^"]|"")*"?|--[^\n]*|\/\*[\s\S]*?(?:\*\/|$)|(\$[A-Za-z_]*\$)[\s\S]*?(?:\1|$)|::|[:@$]([A-Za-z_][A-Za-z_0-9]*)/g;
  const text = sqlText.replace(token, (m: string, _dollar: string | undefined, name: string | undefined) => {
    if (name === undefined || !Object.hasOwn(params, name)) return m;
    let n = slot.get(name);
    if (n === undefined) {
      values.push(params[name] as string);
      n = values.length;
      slot.set(name, n);
    }
    return `$${n}`;
  });
  return { text, values };
}

const kindOf = (f: pg.FieldDef): ColumnKind => {
  if (JSON_TYPES.has(f.dataTypeID)) return 'json';
  if (NUMBER_TYPES.has(f.dataTypeID)) return 'number';
  // An expression (no table column behind it) or a JSON column of ours may hold JSON text.
  if (TEXT_TYPES.has(f.dataTypeID) && (f.tableID === 0 || JSON_COLUMNS.has(f.name))) return 'maybe-json';
  return 'other';
};

/** A value as the SQLite path gives it: instants as ISO text (the mirror's own are text already). */
const plain = (v: unknown): unknown => (v instanceof Date ? v.toISOString() : v);

/** The server-side limit of a statement without `--timeout`: long enough for any report, short of a runaway. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 10 * 60_000;

const failure = (err: unknown): UnderstudyError => {
  if (isUnderstudyError(err)) return err;
  const e = err as { code?: string; message?: string };
  const msg = e.message ?? String(err);
  if (e.code === '57014')
    return new UnderstudyError('US_TIMEOUT', 'the statement ran past its timeout and was stopped', { cause: err });
  if (e.code === '25006') return new UnderstudyError('US_READ_ONLY', `sql is read-only: ${e.message}`, { cause: err });
  // Class 42: syntax error or access rule violation (an unknown table or column, a bad statement).
  if (e.code?.startsWith('42')) return new UsageError(msg, { cause: err });
  return new UnderstudyError('US_STORE', msg, { cause: err });
};

/**
 * One read-only statement over the PostgreSQL mirror at `url`: in a `READ ONLY` transaction on a connection of its
 * own, streamed through a cursor in batches (memory stays flat), rolled back on close. The first batch is read here,
 * so the columns are known. Throws `US_CONFIG` when the server cannot be reached, `US_READ_ONLY` for a statement
 * that would write, `US_USAGE` for SQL the server refuses, `US_STORE` for any other failure.
 *
 * READ ONLY refuses row locks (`FOR UPDATE/SHARE`) but not advisory locks or `pg_sleep`: the statement may hold
 * any advisory key until its connection closes. No writer of the mirror waits on one (the change log's order is a
 * row lock, and a current mirror is opened without the migrator's lock), so it cannot stall them.
 */
export async function openPostgresQuery(
  url: string,
  sqlText: string,
  params: Readonly<Record<string, string>>,
  timeoutMs: number = DEFAULT_STATEMENT_TIMEOUT_MS,
): Promise<ReadOnlyQuery> {
  const verb = leadingVerb(sqlText);
  if (!READING_VERBS.has(verb))
    throw new UnderstudyError('US_READ_ONLY', `sql is read-only: ${verb || 'this'} statements are refused`);
  const client = new pg.Client(poolConfig(url, 1));
  try {
    await client.connect();
  } catch (err) {
    throw postgresUnreachable(url, err);
  }
  const end = async () => {
    await client.query('ROLLBACK').catch(() => undefined);
    await client.end().catch(() => undefined);
  };
  try {
    await client.query('BEGIN READ ONLY');
    // The server stops the statement itself (a killed client alone would leave it running there).
    await client.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.round(timeoutMs))}`);
    const { text, values } = positionalParams(sqlText, params);
    const cursor = client.query(new Cursor(text, values, { rowMode: 'array' }));
    const read = () =>
      new Promise<{ rows: unknown[][]; fields: pg.FieldDef[] }>((resolve, reject) =>
        cursor.read(BATCH, (err, rows, result) =>
          err ? reject(failure(err)) : resolve({ rows: rows as unknown[][], fields: result?.fields ?? [] }),
        ),
      );
    const first = await read();
    const plainRow = (r: unknown[]) => r.map(plain);
    return {
      columns: first.fields.map((f) => f.name),
      kinds: first.fields.map(kindOf),
      async *batches() {
        let batch = first.rows;
        while (batch.length > 0) {
          yield batch.map(plainRow);
          if (batch.length < BATCH) return;
          batch = (await read()).rows;
        }
      },
      close: end,
    };
  } catch (err) {
    await end();
    throw failure(err);
  }
}
