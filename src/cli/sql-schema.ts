import { UsageError } from '../errors.js';
import { openMirrorSchema, type RelationDescription } from '../store/describe-mirror.js';
import { formatGrid } from './format-table.js';
import { rowWriter, type SqlFormat } from './sql-stream.js';

/**
 * What to show about the schema: `sql --tables` / `.tables` (`names`: only the names, packed in columns as the sqlite3
 * shell prints them), or `sql --schema [TABLE]` / `.schema [TABLE]`.
 */
export type SchemaRequest =
  | { readonly kind: 'tables'; readonly names?: boolean }
  | { readonly kind: 'schema'; readonly table?: string };

/**
 * A statement that is a sqlite3 shell dot command (`.tables`, `.schema [TABLE]`) as a schema request; null for
 * SQL. Other dot commands are refused, naming the ones understood.
 */
export function dotCommand(sqlText: string): SchemaRequest | null {
  const s = sqlText.trim().replace(/;$/, '').trim();
  if (!s.startsWith('.')) return null;
  const [cmd, arg, ...rest] = s.split(/\s+/);
  if (cmd === '.tables' && arg === undefined) return { kind: 'tables', names: true };
  if (cmd === '.schema' && rest.length === 0)
    return arg === undefined ? { kind: 'schema' } : { kind: 'schema', table: arg };
  throw new UsageError(`unknown dot command "${s}": understood are .tables and .schema [TABLE]`);
}

const rowsText = (format: SqlFormat, names: string[], rows: unknown[][]): string => {
  let out = '';
  const emit = (s: string) => {
    out += s;
  };
  const w = rowWriter(format, { names, kinds: names.map(() => 'other' as const) }, 1000, emit, () => undefined);
  for (const r of rows) w.row(r);
  w.end();
  return out;
};

const describeText = (r: RelationDescription): string =>
  [
    `${r.name} (${r.type})${r.about ? `: ${r.about}` : ''}`,
    formatGrid(
      ['column', 'type', 'not null', 'meaning'],
      r.columns.map((c) => [c.name, c.type, c.notNull ? 'yes' : '', c.meaning]),
      { maxWidth: 1000 },
    ).replace(/^/gm, '  '),
    ...(r.indexes.length > 0 ? [`  indexes: ${r.indexes.join('; ')}`] : []),
    '',
  ].join('\n');

const TABLES_COLUMNS = ['name', 'type', 'rows', 'live', 'about'];

/** Names in as many columns as fit 80 characters, row by row, as the sqlite3 shell's `.tables` packs them. */
const packedNames = (names: readonly string[]): string => {
  const width = Math.max(...names.map((n) => n.length), 1) + 2;
  const perLine = Math.max(1, Math.floor(80 / width));
  const lines: string[] = [];
  for (let i = 0; i < names.length; i += perLine)
    lines.push(
      names
        .slice(i, i + perLine)
        .map((n) => n.padEnd(width))
        .join('')
        .trimEnd(),
    );
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
};

/**
 * The tables and views of the mirror `database` (a SQLite file or a PostgreSQL URL) with their row counts (`tables`), or the columns, types, meanings
 * and indexes of one or all of them (`schema`), as text in `format` (`raw` is refused).
 */
export async function schemaText(database: string, req: SchemaRequest, format: SqlFormat): Promise<string> {
  if (format === 'raw') throw new UsageError('--raw prints one value of a statement, not --tables or --schema');
  const schema = openMirrorSchema(database);
  try {
    if (req.kind === 'tables') {
      const rows = (await schema.relations()).map((r) => [r.name, r.type, r.rows, r.live, r.about]);
      if (format !== 'table') return rowsText(format, TABLES_COLUMNS, rows);
      if (req.names) return packedNames(rows.map(([name]) => String(name)));
      return `${formatGrid(TABLES_COLUMNS, rows, { maxWidth: 90, footer: true })}\n`;
    }
    const described = await schema.describe(req.table);
    switch (format) {
      case 'table':
        return described.map(describeText).join('\n');
      case 'json':
        return `${JSON.stringify(described, null, 2)}\n`;
      case 'nl':
        return described.map((d) => `${JSON.stringify(d)}\n`).join('');
      case 'csv': {
        const flat = described.flatMap((d) =>
          d.columns.map((c) => [d.name, c.name, c.type, c.notNull ? 1 : 0, c.meaning]),
        );
        return rowsText(format, ['table', 'column', 'type', 'not_null', 'meaning'], flat);
      }
    }
  } finally {
    await schema.close();
  }
}
