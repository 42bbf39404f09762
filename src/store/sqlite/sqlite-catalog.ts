import type { CatalogReader } from '../describe-mirror.js';
import { openReadOnlyDatabase } from './read-only-database.js';

/** FTS5 keeps each index in shadow tables named after it: internal, never listed. */
const SHADOW = ['data', 'idx', 'content', 'docsize', 'config'];

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The catalog of the SQLite mirror at `path`, opened read-only. */
export function sqliteCatalog(path: string): CatalogReader {
  const db = openReadOnlyDatabase(path);
  const all = <T>(sqlText: string, ...params: unknown[]) => db.prepare(sqlText).all(...params) as T[];
  return {
    list: async () => {
      const rows = all<{ name: string; type: 'table' | 'view'; sql: string | null }>(
        `SELECT name, type, sql FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'`,
      );
      const virtual = rows.filter((r) => /^CREATE VIRTUAL TABLE/i.test(r.sql ?? '')).map((r) => r.name);
      const shadow = new Set(virtual.flatMap((v) => SHADOW.map((x) => `${v}_${x}`)));
      return rows
        .filter((r) => !shadow.has(r.name))
        .map((r) => ({ name: r.name, type: virtual.includes(r.name) ? ('virtual table' as const) : r.type }));
    },
    columns: async (name) =>
      all<{ name: string; type: string; nn: number; pk: number }>(
        `SELECT name, type, "notnull" AS nn, pk FROM pragma_table_info(?)`,
        name,
      ).map((c) => ({ name: c.name, type: c.type, notNull: c.nn === 1 || c.pk > 0 })),
    indexes: async (name) => {
      const cols = all<{ name: string; pk: number }>(`SELECT name, pk FROM pragma_table_info(?)`, name);
      const pk = cols.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk);
      const out = pk.length > 0 ? [`primary key (${pk.map((c) => c.name).join(', ')})`] : [];
      for (const ix of all<{ name: string; origin: string }>(
        `SELECT name, origin FROM pragma_index_list(?) ORDER BY name`,
        name,
      )) {
        if (ix.origin === 'pk') continue;
        const on = all<{ name: string }>(`SELECT name FROM pragma_index_info(?) ORDER BY seqno`, ix.name)
          .map((c) => c.name)
          .join(', ');
        out.push(ix.origin === 'u' ? `unique (${on})` : `${ix.name} (${on})`);
      }
      return out;
    },
    count: async (name, liveOnly) =>
      Number(
        db
          .prepare(`SELECT count(*) FROM ${quote(name)}${liveOnly ? ' WHERE deleted_at IS NULL' : ''}`)
          .pluck()
          .get() ?? 0,
      ),
    close: async () => {
      db.close();
    },
  };
}
