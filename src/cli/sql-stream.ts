import { openReadOnlyQuery } from '../store/read-only-query.js';
import { gridLayout, rowCountFooter } from './format-table.js';

/** How the sql command prints rows: an aligned table, a JSON array, CSV, or one JSON object per line. */
export type SqlFormat = 'table' | 'json' | 'csv' | 'nl';

/** One run of the sql command: plain data, so it can be handed to a child process. */
export interface SqlJob {
  readonly path: string;
  readonly sqlText: string;
  readonly params: Readonly<Record<string, string>>;
  readonly format: SqlFormat;
  /** Table cells longer than this are cut (table format only). */
  readonly maxWidth: number;
}

/** Output is handed on in chunks of about this many characters (one row may overshoot it). */
export const CHUNK_CHARS = 64 * 1024;
const csvField = (v: unknown): string => {
  if (v === null || v === undefined) return '';
  const s = Buffer.isBuffer(v) ? v.toString('base64') : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};
const csvLine = (r: readonly unknown[]): string => `${r.map(csvField).join(',')}\r\n`;

/** RFC 4180: CRLF line ends, fields with commas, quotes or line breaks quoted, quotes doubled. */
/** The table format sizes its columns from this many first rows, then streams the rest in that layout. */
export const TABLE_SAMPLE_ROWS = 1000;

export const formatCsv = (columns: readonly string[], rows: readonly unknown[][]): string =>
  [columns, ...rows].map(csvLine).join('');

const jsonValue = (v: unknown): unknown => {
  if (Buffer.isBuffer(v)) return v.toString('base64');
  if (typeof v === 'bigint') return Number(v);
  return v;
};
const jsonRow = (columns: readonly string[], r: readonly unknown[]): string =>
  JSON.stringify(Object.fromEntries(columns.map((c, i) => [c, jsonValue(r[i])])));

/** Receives rows one at a time and emits their text; `end` emits whatever closes the output. */
interface RowWriter {
  row(r: readonly unknown[]): void;
  end(): void;
}

function rowWriter(
  format: SqlFormat,
  columns: readonly string[],
  maxWidth: number,
  emit: (s: string) => void,
): RowWriter {
  switch (format) {
    case 'csv':
      emit(csvLine(columns));
      return { row: (r) => emit(csvLine(r)), end: () => undefined };
    case 'nl':
      return { row: (r) => emit(`${jsonRow(columns, r)}\n`), end: () => undefined };
    case 'json': {
      let n = 0;
      return {
        row: (r) => emit(`${n++ === 0 ? '[\n' : ',\n'}${jsonRow(columns, r)}`),
        end: () => emit(n === 0 ? '[]\n' : '\n]\n'),
      };
    }
    case 'table': {
      // Widths come from a fixed sample so memory stays flat: a later, wider cell overflows its column
      // (it is still cut at maxWidth); up to TABLE_SAMPLE_ROWS rows the table is exactly what a full pass gives.
      const sample: (readonly unknown[])[] = [];
      let line: ((r: readonly unknown[]) => string) | null = null;
      let n = 0;
      const layOut = () => {
        const layout = gridLayout(columns, sample, maxWidth);
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
export async function streamSql(job: SqlJob, write: (chunk: string) => void | Promise<void>): Promise<void> {
  const query = openReadOnlyQuery(job.path, job.sqlText, job.params);
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
    const out = rowWriter(job.format, query.columns, job.maxWidth, emit);
    for (const r of query.rows()) {
      out.row(r);
      if (waiting) {
        await waiting;
        waiting = undefined;
      }
    }
    out.end();
    if (buf !== '') await write(buf);
  } finally {
    query.close();
  }
}
