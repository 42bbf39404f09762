import stringWidth from 'string-width';

/**
 * Characters a terminal would act on rather than show (C0 and C1 controls, DEL, bidi overrides and isolates):
 * a cell shows them escaped (`\x1b`, `\u202e`), so an upstream title cannot clear the screen or reorder the line.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const escapeControl = (s: string): string =>
  s.replace(CONTROL, (ch) => {
    if (ch === '\t') return '\\t';
    const code = ch.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });

/** Columns a string takes on a terminal: CJK and emoji count 2, combining marks 0. */
export const displayWidth = (s: string): number => (/^[\x20-\x7e]*$/.test(s) ? s.length : stringWidth(s));

const segmenter = new Intl.Segmenter();
/** `s` cut to at most `width` terminal columns, whole graphemes only. */
const cutToWidth = (s: string, width: number): string => {
  let out = '';
  let w = 0;
  for (const { segment } of segmenter.segment(s)) {
    const sw = displayWidth(segment);
    if (w + sw > width) break;
    out += segment;
    w += sw;
  }
  return out;
};
const padEnd = (s: string, width: number) => s + ' '.repeat(Math.max(0, width - displayWidth(s)));
const padStart = (s: string, width: number) => ' '.repeat(Math.max(0, width - displayWidth(s))) + s;

const cellText = (v: unknown, nullText: string): string => {
  if (v === null || v === undefined) return nullText;
  if (Buffer.isBuffer(v)) return `<blob ${v.length} bytes>`;
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
};

export interface GridOptions {
  /** Cells longer than this many terminal columns are cut with an ellipsis. Default 60. */
  readonly maxWidth?: number;
  /** How a NULL cell reads. Default '' (the sql command shows `NULL`, so NULL and '' differ). */
  readonly nullText?: string;
}

/** The layout of an aligned table: its header lines, and how to print any row in it. */
export interface GridLayout {
  /** Header and rule; empty when there are no columns. */
  readonly head: readonly string[];
  /** One row, cells clipped to `maxWidth` and padded to the layout's widths (a wider cell just overflows). */
  line(row: readonly unknown[]): string;
}

/**
 * Lays out columns from a sample of rows: each column as wide as its widest clipped cell in the sample (in terminal
 * columns: CJK counts 2), numeric (right-aligned) when every sampled value is null or a number. Cells wider than
 * `maxWidth` are cut with an ellipsis, line breaks shown as ↵ and other control characters escaped.
 */
export function gridLayout(
  columns: readonly string[],
  sample: readonly (readonly unknown[])[],
  opts: GridOptions = {},
): GridLayout {
  const maxWidth = opts.maxWidth ?? 60;
  const nullText = opts.nullText ?? '';
  const clip = (s: string): string => {
    const one = escapeControl(s.replace(/\r?\n/g, '↵'));
    return displayWidth(one) > maxWidth ? `${cutToWidth(one, Math.max(1, maxWidth - 1))}…` : one;
  };
  const cellsOf = (r: readonly unknown[]) => r.map((v) => clip(cellText(v, nullText)));
  const numeric = columns.map(
    (_, i) =>
      sample.length > 0 && sample.every((r) => r[i] === null || typeof r[i] === 'number' || typeof r[i] === 'bigint'),
  );
  const sampleCells = sample.map(cellsOf);
  const head = columns.map(clip);
  const widths = head.map((c, i) =>
    sampleCells.reduce((w, r) => Math.max(w, displayWidth(r[i] ?? '')), displayWidth(c)),
  );
  const pad = (vals: readonly string[]) =>
    vals
      .map((s, i) => (numeric[i] ? padStart(s, widths[i] ?? 0) : padEnd(s, widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return {
    head: columns.length > 0 ? [pad(head), widths.map((w) => '-'.repeat(w)).join('  ')] : [],
    line: (row) => pad(cellsOf(row)),
  };
}

/** The `(N rows)` footer of a table. */
export const rowCountFooter = (n: number): string => `(${n} ${n === 1 ? 'row' : 'rows'})`;

/**
 * A readable aligned table: header, rule, rows (numeric columns right-aligned), laid out by `gridLayout` over all
 * rows. With `footer`, ends with `(N rows)`.
 */
export function formatGrid(
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
  opts: GridOptions & { footer?: boolean } = {},
): string {
  const layout = gridLayout(columns, rows, opts);
  const out = columns.length > 0 ? [...layout.head, ...rows.map(layout.line)] : [];
  if (opts.footer) out.push(rowCountFooter(rows.length));
  return out.join('\n');
}

/** `formatGrid` over row objects, columns taken from the first row. */
export function formatTable(rows: readonly Record<string, unknown>[], opts: { maxCell?: number } = {}): string {
  if (rows.length === 0) return '(no rows)';
  const columns = Object.keys(rows[0] ?? {});
  return formatGrid(
    columns,
    rows.map((r) => columns.map((c) => r[c])),
    opts.maxCell ? { maxWidth: opts.maxCell } : {},
  );
}
