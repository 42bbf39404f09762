const cellText = (v: unknown): string => {
  if (v === null || v === undefined) return '';
  if (Buffer.isBuffer(v)) return `<blob ${v.length} bytes>`;
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
};

/** The layout of an aligned table: its header lines, and how to print any row in it. */
export interface GridLayout {
  /** Header and rule; empty when there are no columns. */
  readonly head: readonly string[];
  /** One row, cells clipped to `maxWidth` and padded to the layout's widths (a wider cell just overflows). */
  line(row: readonly unknown[]): string;
}

/**
 * Lays out columns from a sample of rows: each column as wide as its widest clipped cell in the sample, numeric
 * (right-aligned) when every sampled value is null or a number. Cells longer than `maxWidth` are cut with an
 * ellipsis and line breaks shown as ↵.
 */
export function gridLayout(
  columns: readonly string[],
  sample: readonly (readonly unknown[])[],
  maxWidth = 60,
): GridLayout {
  const clip = (s: string): string => {
    const one = s.replace(/\r?\n/g, '↵');
    return one.length > maxWidth ? `${one.slice(0, Math.max(1, maxWidth - 1))}…` : one;
  };
  const cellsOf = (r: readonly unknown[]) => r.map((v) => clip(cellText(v)));
  const numeric = columns.map(
    (_, i) =>
      sample.length > 0 && sample.every((r) => r[i] === null || typeof r[i] === 'number' || typeof r[i] === 'bigint'),
  );
  const sampleCells = sample.map(cellsOf);
  const widths = columns.map((c, i) => sampleCells.reduce((w, r) => Math.max(w, (r[i] ?? '').length), c.length));
  const pad = (vals: readonly string[]) =>
    vals
      .map((s, i) => (numeric[i] ? s.padStart(widths[i] ?? 0) : s.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return {
    head: columns.length > 0 ? [pad(columns), widths.map((w) => '-'.repeat(w)).join('  ')] : [],
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
  opts: { maxWidth?: number; footer?: boolean } = {},
): string {
  const layout = gridLayout(columns, rows, opts.maxWidth ?? 60);
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
