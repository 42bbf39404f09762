import { type RawBuilder, sql } from 'kysely';
import { UsageError } from '../errors.js';
import { isPostgresUrl, postgresEngine } from './postgres-engine.js';
import { openReadOnlyDatabase } from './read-only-query.js';
import { ENGINE_COLUMNS, relationNote, SCHEMA_CATALOG } from './schema-catalog.js';

/** A table or view of the mirror with its row counts (`sql --tables`). */
export interface RelationSummary {
  readonly name: string;
  readonly type: 'table' | 'view' | 'virtual table';
  readonly rows: number;
  /** Rows with `deleted_at IS NULL`, for tables that have that column; else null. */
  readonly live: number | null;
  readonly about: string;
}

export interface ColumnDescription {
  readonly name: string;
  readonly type: string;
  readonly notNull: boolean;
  readonly meaning: string;
}

/** A table or view with its columns, what each means, and its indexes (`sql --schema`). */
export interface RelationDescription {
  readonly name: string;
  readonly type: RelationSummary['type'];
  readonly about: string;
  readonly columns: readonly ColumnDescription[];
  readonly indexes: readonly string[];
}

/**
 * Reading a mirror's own schema: what is really there (types, indexes, row counts) with the catalog's meanings on
 * top, on either engine.
 */
export interface MirrorSchema {
  /** Every table and view, the catalog's order first, then any other alphabetically. */
  relations(): Promise<RelationSummary[]>;
  /** One relation, or every one when `name` is undefined; `US_USAGE` naming it when there is no such relation. */
  describe(name?: string): Promise<RelationDescription[]>;
  close(): Promise<void>;
}

/** What an engine reads of its own catalog; `openSchema` puts the meanings and the order on top. */
interface RawSchema {
  list(): Promise<{ name: string; type: RelationSummary['type'] }[]>;
  columns(name: string): Promise<{ name: string; type: string; notNull: boolean }[]>;
  indexes(name: string): Promise<string[]>;
  count(name: string, liveOnly: boolean): Promise<number>;
  close(): Promise<void>;
}

const ORDER = new Map(SCHEMA_CATALOG.map((r, i) => [r.name, i]));
const byCatalog = (a: { name: string }, b: { name: string }) =>
  (ORDER.get(a.name) ?? 1e9) - (ORDER.get(b.name) ?? 1e9) || (a.name < b.name ? -1 : 1);

function openSchema(raw: RawSchema): MirrorSchema {
  const describeOne = async (r: { name: string; type: RelationSummary['type'] }): Promise<RelationDescription> => {
    const note = relationNote(r.name);
    const meaning = (c: string) =>
      note?.columns.find((n) => n.name === c)?.meaning ?? ENGINE_COLUMNS[`${r.name}.${c}`] ?? '';
    return {
      name: r.name,
      type: r.type,
      about: note?.about ?? '',
      columns: (await raw.columns(r.name)).map((c) => ({ ...c, type: c.type.toUpperCase(), meaning: meaning(c.name) })),
      indexes: r.type === 'table' ? await raw.indexes(r.name) : [],
    };
  };
  const list = async () => (await raw.list()).sort(byCatalog);
  return {
    relations: async () => {
      const out: RelationSummary[] = [];
      for (const r of await list()) {
        const hasDeletedAt = r.type === 'table' && (await raw.columns(r.name)).some((c) => c.name === 'deleted_at');
        out.push({
          ...r,
          rows: await raw.count(r.name, false),
          live: hasDeletedAt ? await raw.count(r.name, true) : null,
          about: relationNote(r.name)?.about ?? '',
        });
      }
      return out;
    },
    describe: async (name) => {
      const all = await list();
      const chosen = name === undefined ? all : all.filter((r) => r.name === name);
      if (chosen.length === 0)
        throw new UsageError(`no table or view named "${name}" (see \`understudy sql --tables\`)`);
      const out: RelationDescription[] = [];
      for (const r of chosen) out.push(await describeOne(r));
      return out;
    },
    close: () => raw.close(),
  };
}

/** FTS5 keeps each index in shadow tables named after it: internal, never listed. */
const SHADOW = ['data', 'idx', 'content', 'docsize', 'config'];

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The schema of the SQLite mirror at `path`, opened read-only. */
function sqliteSchema(path: string): RawSchema {
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

/** The schema of the PostgreSQL mirror at `url` (its current schema), from information_schema and pg_catalog. */
function postgresSchema(url: string): RawSchema {
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

/** The schema of the mirror `database` names: a PostgreSQL URL, or a SQLite file opened read-only. */
export const openMirrorSchema = (database: string): MirrorSchema =>
  openSchema(isPostgresUrl(database) ? postgresSchema(database) : sqliteSchema(database));
