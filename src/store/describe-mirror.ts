import { UsageError } from '../errors.js';
import { dialectFor } from './dialect.js';
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
export interface CatalogReader {
  list(): Promise<{ name: string; type: RelationSummary['type'] }[]>;
  columns(name: string): Promise<{ name: string; type: string; notNull: boolean }[]>;
  indexes(name: string): Promise<string[]>;
  count(name: string, liveOnly: boolean): Promise<number>;
  close(): Promise<void>;
}

const ORDER = new Map(SCHEMA_CATALOG.map((r, i) => [r.name, i]));
const byCatalog = (a: { name: string }, b: { name: string }) =>
  (ORDER.get(a.name) ?? 1e9) - (ORDER.get(b.name) ?? 1e9) || (a.name < b.name ? -1 : 1);

function openSchema(raw: CatalogReader): MirrorSchema {
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

/** The schema of the mirror `database` names: a PostgreSQL URL, or a SQLite file opened read-only. */
export const openMirrorSchema = (database: string): MirrorSchema => openSchema(dialectFor(database).catalog());
