import { sql } from 'kysely';
import type { JsonSql, Sql } from './json-sql.js';
import type { ReadView, SortKey } from './read-spec.js';
import { typedField } from './typed-fields.js';

/** One ORDER BY term: nulls after every value ascending, before them descending (the upstream's order). */
const term = (key: Sql, desc: boolean): Sql => (desc ? sql`${key} desc nulls first` : sql`${key} asc nulls last`);

/**
 * The ORDER BY of a read: each key by the first value at its path (instants as instants, strings by code unit),
 * then the record's key ascending, as the upstream breaks ties.
 */
export function compileOrder(keys: readonly SortKey[], view: ReadView, row: string, json: JsonSql): Sql {
  const terms: Sql[] = [];
  for (const k of keys) {
    const root = k.path[0] as string;
    if (view.computed.has(root)) continue; // never stored: the same (absent) for every record
    const col = k.path.length === 1 ? typedField(view, row, root) : null;
    if (col) {
      terms.push(term(col.kind === 'instant' ? col.column : json.collated(col.column), k.desc));
      continue;
    }
    for (const key of json.sortKeys(row, k.path, view.locale)) terms.push(term(key, k.desc));
  }
  terms.push(sql`${json.collated(sql.ref(`${row}.id`))} asc`);
  return sql.join(terms, sql`, `);
}
