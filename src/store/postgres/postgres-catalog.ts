import { type RawBuilder, sql } from 'kysely';
import type { CatalogReader } from '../describe-mirror.js';
import { postgresEngine } from './postgres-engine.js';

/** The catalog of the PostgreSQL mirror at `url` (its current schema), from information_schema and pg_catalog. */
export function postgresCatalog(url: string): CatalogReader {
  const engine = postgresEngine(url, { maxConnections: 1, readOnly: true });
  const rows = async <T>(q: RawBuilder<T>) => (await q.execute(engine.db)).rows;
  return {
    list: async () =>
      (
        await rows<{ name: string; type: string }>(sql`SELECT table_name AS name, table_type AS type
          FROM information_schema.tables WHERE table_schema = current_schema()`)
      ).map((r) => ({ name: r.name, type: r.type === 'VIEW' ? ('view' as const) : ('table' as const) })),
    columns: async (name) =>
      (
        await rows<{ name: string; type: string; nullable: string }>(sql`SELECT column_name AS name,
          data_type AS type, is_nullable AS nullable FROM information_schema.columns
          WHERE table_schema = current_schema() AND table_name = ${name} ORDER BY ordinal_position`)
      ).map((c) => ({ name: c.name, type: c.type, notNull: c.nullable === 'NO' })),
    indexes: async (name) =>
      (
        await rows<{ name: string; pk: boolean; uniq: boolean; cols: string }>(sql`SELECT i.relname AS name,
          x.indisprimary AS pk, x.indisunique AS uniq, string_agg(a.attname, ', ' ORDER BY k.n) AS cols
          FROM pg_index x JOIN pg_class t ON t.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid
          JOIN pg_namespace ns ON ns.oid = t.relnamespace
          CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS k(attnum, n)
          JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
          WHERE ns.nspname = current_schema() AND t.relname = ${name}
          GROUP BY i.relname, x.indisprimary, x.indisunique ORDER BY x.indisprimary DESC, i.relname`)
      ).map((ix) => (ix.pk ? `primary key (${ix.cols})` : ix.uniq ? `unique (${ix.cols})` : `${ix.name} (${ix.cols})`)),
    count: async (name, liveOnly) => {
      const where = liveOnly ? sql` WHERE deleted_at IS NULL` : sql``;
      const [r] = await rows<{ n: number | string }>(sql`SELECT count(*) AS n FROM ${sql.table(name)}${where}`);
      return Number(r?.n ?? 0);
    },
    close: () => engine.close(),
  };
}
