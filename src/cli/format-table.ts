const cellText = (v: unknown): string => {
  if (v === null || v === undefined) return '';
  if (Buffer.isBuffer(v)) return `<blob ${v.length} bytes>`;
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
};

/**
 * A readable aligned table: header, rule, rows (numeric columns right-aligned). Cells longer than `maxWidth` are
 * cut with an ellipsis and line breaks shown as ↵. With `footer`, ends with `(N rows)`.
 */
export function formatGrid(
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
  opts: { maxWidth?: number; footer?: boolean } = {},
): string {
  const maxWidth = opts.maxWidth ?? 60;
  const clip = (s: string): string => {
    const one = s.replace(/\r?\n/g, '↵');
    return one.length > maxWidth ? `${one.slice(0, Math.max(1, maxWidth - 1))}…` : one;
  };
  const cells = rows.map((r) => r.map((v) => clip(cellText(v))));
  const numeric = columns.map(
    (_, i) =>
      rows.length > 0 && rows.every((r) => r[i] === null || typeof r[i] === 'number' || typeof r[i] === 'bigint'),
  );
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => (r[i] ?? '').length)));
  const line = (vals: readonly string[]) =>
    vals
      .map((s, i) => (numeric[i] ? s.padStart(widths[i] ?? 0) : s.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const out =
    columns.length > 0 ? [line(columns), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)] : [];
  if (opts.footer) out.push(`(${rows.length} ${rows.length === 1 ? 'row' : 'rows'})`);
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
