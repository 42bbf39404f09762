/** One column of the mirror and what it means (`sql --schema`, docs/schema.md). */
export interface ColumnNote {
  readonly name: string;
  /** The SQLite type as declared (PostgreSQL: `doc` is jsonb, the rest alike). */
  readonly type: 'TEXT' | 'INTEGER' | 'REAL' | 'VARCHAR(255)' | '';
  readonly notNull: boolean;
  readonly meaning: string;
}

/** One table or view of the mirror, its columns and indexes. */
export interface RelationNote {
  readonly name: string;
  readonly kind: 'table' | 'view' | 'virtual table';
  readonly about: string;
  readonly columns: readonly ColumnNote[];
  /** `primary key (a, b)`, `unique (a, b)` and `index_name (a, b)`, as the migrations create them. */
  readonly indexes: readonly string[];
}

/** A column note of `type`; `t` and `int` for the two usual types. */
export const c = (name: string, type: ColumnNote['type'], meaning: string, notNull = false): ColumnNote => ({
  name,
  type,
  notNull,
  meaning,
});
export const t = (name: string, meaning: string, notNull = false) => c(name, 'TEXT', meaning, notNull);
export const int = (name: string, meaning: string, notNull = false) => c(name, 'INTEGER', meaning, notNull);
