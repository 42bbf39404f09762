import { UnderstudyError, UsageError } from '../errors.js';
import { openQuery } from '../store/open-query.js';
import type { ColumnKind } from '../store/read-only-query.js';
import { gridLayout, rowCountFooter } from './format-table.js';

/**
 * How the sql command prints rows: an aligned table, a JSON array, CSV, one JSON object per line, or one value as
 * is (`raw`).
 */
export type SqlFormat = 'table' | 'json' | 'csv' | 'nl' | 'raw';

/** One run of the sql command: plain data, so it can be handed to a child process. */
export interface SqlJob {
  readonly path: string;
  readonly sqlText: string;
  readonly params: Readonly<Record<string, string>>;
  readonly format: SqlFormat;
  /** Table cells longer than this are cut (table format only). */
  readonly maxWidth: number;
  /** `--timeout`, in ms: on PostgreSQL also the server's `statement_timeout`. */
  readonly timeoutMs?: number;
}

/** Output is handed on in chunks of about this many characters (one row may overshoot it). */
export const CHUNK_CHARS = 64 * 1024;
/** The table format sizes its columns from this many first rows, then streams the rest in that layout. */
export const TABLE_SAMPLE_ROWS = 1000;

const csvField = (v: unknown): string => {
  if (v === null || v === undefined) return '';
  const s = Buffer.isBuffer(v) ? v.toString('base64') : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};
/** RFC 4180: CRLF line ends, fields with commas, quotes or line breaks quoted, quotes doubled. */
const csvLine = (r: readonly unknown[]): string => `${r.map(csvField).join(',')}\r\n`;

export const formatCsv = (columns: readonly string[], rows: readonly unknown[][]): string =>
  [columns, ...rows].map(csvLine).join('');

/** JSON text verbatim (so big integers in it stay exact), its line breaks (whitespace outside strings) as spaces. */
const verbatimJson = (v: string): string | null => {
  try {
    JSON.parse(v);
    return v.trim().replace(/[\r\n]/g, ' ');
  } catch {
    return null;
  }
};

/**
 * A value as JSON text, by its column's kind. Integers are printed exactly (SQLite hands them over as bigint,
 * PostgreSQL as digits in a `number` column). JSON text prints as that JSON: any value of a `json` column, and an
 * object or array in a `maybe-json` column (an expression or the `doc` column); a plain text column never.
 */
export const jsonText = (v: unknown, kind: ColumnKind = 'other'): string => {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'bigint') return v.toString();
  if (Buffer.isBuffer(v)) return JSON.stringify(v.toString('base64'));
  if (typeof v === 'number' && !Number.isFinite(v)) return 'null';
  if (typeof v === 'string') {
    if (kind === 'number' && /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(v)) return v;
    if (kind === 'json' || (kind === 'maybe-json' && /^\s*[[{]/.test(v))) return verbatimJson(v) ?? JSON.stringify(v);
  }
  return JSON.stringify(v);
};

/**
 * Column names made unique for JSON objects, where a repeated name would silently keep only the last value: the
 * second `a` becomes `a_2` (`a_3`, … skipping names already taken). Returns the names and what was renamed.
 */
export function uniqueNames(columns: readonly string[]): { names: string[]; renamed: [string, string][] } {
  const taken = new Set(columns);
  const seen = new Set<string>();
  const renamed: [string, string][] = [];
  const names = columns.map((c) => {
    if (!seen.has(c)) {
      seen.add(c);
      return c;
    }
    let n = 2;
    while (taken.has(`${c}_${n}`)) n++;
    const name = `${c}_${n}`;
    taken.add(name);
    seen.add(name);
    renamed.push([c, name]);
    return name;
  });
  return { names, renamed };
}

/** Receives rows one at a time and emits their text; `end` emits whatever closes the output. */
interface RowWriter {
  row(r: readonly unknown[]): void;
  end(): void;
}

/** What a row writer knows of the columns. */
export interface ColumnsInfo {
  readonly names: readonly string[];
  readonly kinds: readonly ColumnKind[];
}

function jsonRowText(cols: ColumnsInfo, warn: (s: string) => void): (r: readonly unknown[]) => string {
  const { names, renamed } = uniqueNames(cols.names);
  for (const [from, to] of renamed)
    warn(`warning: column name "${from}" appears more than once; the repeat is printed as "${to}"`);
  const keys = names.map((n) => `${JSON.stringify(n)}:`);
  return (r) => `{${keys.map((k, i) => k + jsonText(r[i], cols.kinds[i])).join(',')}}`;
}

function rawWriter(cols: ColumnsInfo, emit: (s: string) => void): RowWriter {
  if (cols.names.length !== 1)
    throw new UsageError(`--raw prints one value: the statement returns ${cols.names.length} columns, not 1`);
  let n = 0;
  return {
    row: (r) => {
      if (++n > 1) throw new UsageError('--raw prints one value: the statement returned more than one row');
      const v = r[0];
      if (v === null || v === undefined) return;
      emit(`${Buffer.isBuffer(v) ? v.toString('base64') : String(v)}\n`);
    },
    end: () => {
      if (n === 0) throw new UnderstudyError('US_NOT_FOUND', '--raw: the statement returned no row');
    },
  };
}

/** The writer of one output format; `warn` gets one-line warnings (a renamed column). */
export function rowWriter(
  format: SqlFormat,
  cols: ColumnsInfo,
  maxWidth: number,
  emit: (s: string) => void,
  warn: (s: string) => void,
): RowWriter {
  switch (format) {
    case 'raw':
      return rawWriter(cols, emit);
    case 'csv':
      emit(csvLine(cols.names));
      return { row: (r) => emit(csvLine(r)), end: () => undefined };
    case 'nl': {
      const line = jsonRowText(cols, warn);
      return { row: (r) => emit(`${line(r)}\n`), end: () => undefined };
    }
    case 'json': {
      const line = jsonRowText(cols, warn);
      let n = 0;
      return {
        row: (r) => emit(`${n++ === 0 ? '[\n' : ',\n'}${line(r)}`),
        end: () => emit(n === 0 ? '[]\n' : '\n]\n'),
      };
    }
    case 'table': {
      // Widths come from a fixed sample so memory stays flat: a later, wider cell overflows its column
      // (it is still cut at maxWidth); up to TABLE_SAMPLE_ROWS rows the table is exactly what a full pass gives.
      const columns = cols.names;
      const sample: (readonly unknown[])[] = [];
      let line: ((r: readonly unknown[]) => string) | null = null;
      let n = 0;
      const layOut = () => {
        const layout = gridLayout(columns, sample, { maxWidth, nullText: 'NULL' });
        line = layout.line;
        if (columns.length > 0) for (const l of [...layout.head, ...sample.map(layout.line)]) emit(`${l}\n`);
        sample.length = 0;
      };
      return {
        row: (r) => {
          n++;
          if (line) return emit(`${line(r)}\n`);
          sample.push(r);
          if (sample.length === TABLE_SAMPLE_ROWS) layOut();
        },
        end: () => {
          if (!line) layOut();
          emit(`${rowCountFooter(n)}\n`);
        },
      };
    }
  }
}

/**
 * Runs one read-only statement over the mirror and writes its output as rows are read, in chunks of about
 * `CHUNK_CHARS`, so memory stays flat however many rows there are. When `write` returns a promise (a stream
 * asking to wait: backpressure), reading pauses until it settles. Throws `UnderstudyError`s: `US_CONFIG` for a
 * missing or unreadable database, `US_USAGE` for SQL that does not compile, `US_READ_ONLY`, `US_STORE`.
 */
export async function streamSql(
  job: SqlJob,
  write: (chunk: string) => void | Promise<void>,
  warn: (line: string) => void = () => undefined,
): Promise<void> {
  const query = await openQuery(job.path, job.sqlText, job.params, job.timeoutMs);
  try {
    let buf = '';
    let waiting: Promise<void> | undefined;
    const emit = (s: string) => {
      buf += s;
      if (buf.length >= CHUNK_CHARS) {
        const w = write(buf);
        if (w instanceof Promise) waiting = w;
        buf = '';
      }
    };
    const out = rowWriter(job.format, { names: query.columns, kinds: query.kinds }, job.maxWidth, emit, warn);
    for await (const batch of query.batches()) {
      for (const r of batch) out.row(r);
      if (waiting) {
        await waiting;
        waiting = undefined;
      }
    }
    out.end();
    if (buf !== '') await write(buf);
  } finally {
    await query.close();
  }
}
