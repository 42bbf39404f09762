/** Renders rows as an aligned text table with a header row; numbers are right-aligned. */
export function formatTable(rows: readonly Record<string, unknown>[], opts: { maxCell?: number } = {}): string {
  if (rows.length === 0) return '(no rows)';
  const max = opts.maxCell ?? 60;
  const cols = Object.keys(rows[0] ?? {});
  const cell = (v: unknown): string => {
    const s = v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
    return s.length > max ? `${s.slice(0, max - 1)}…` : s;
  };
  const text = rows.map((r) => cols.map((c) => cell(r[c])));
  const numeric = cols.map((c) => rows.every((r) => typeof r[c] === 'number' || r[c] === null));
  const widths = cols.map((c, i) => Math.max(c.length, ...text.map((t) => (t[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((s, i) => (numeric[i] ? s.padStart(widths[i] ?? 0) : s.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(cols), widths.map((w) => '-'.repeat(w)).join('  '), ...text.map(line)].join('\n');
}
