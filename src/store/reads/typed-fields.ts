import { sql } from 'kysely';
import { PUBLISHED } from '../../sync/store-port.js';
import { TYPED_COLUMNS } from '../columns.js';
import type { Sql } from './json-sql.js';
import type { ReadView } from './read-spec.js';

/**
 * A column that holds a top-level field of the record as the reads compare it: `key` the record's key (always
 * there, a string), `instant` a date-time normalised to UTC (null when absent or null), `text` a string or id.
 */
export interface TypedField {
  readonly kind: 'key' | 'instant' | 'text';
  readonly column: Sql;
}

/** Typed text columns that hold the field's string exactly (references at depth 0 are their ids). */
const TEXT_FIELDS = new Set(['title', 'name', 'slug', 'event', 'venue', 'season', 'organization', 'blog', 'parent']);

/**
 * The column of `view`'s table holding top-level field `field` exactly, or null: the key and `updatedAt` in every
 * table; the other typed columns only in a collection's own table (published rows, default locale).
 */
export function typedField(view: ReadView, row: string, field: string): TypedField | null {
  const col = (name: string) => sql.ref(`${row}.${name}`);
  if (field === 'id' || (view.collection === 'media' && field === 'filename'))
    return { kind: 'key', column: col('id') };
  if (field === 'updatedAt') return { kind: 'instant', column: col('updated_at') };
  if (view.variant !== PUBLISHED) return null;
  if (field === 'createdAt') return { kind: 'instant', column: col('created_at') };
  const typed = TYPED_COLUMNS[view.collection].find((t) => t.path === field);
  if (!typed) return null;
  if (typed.kind === 'datetime') return { kind: 'instant', column: col(typed.column) };
  if ((typed.kind === 'text' || typed.kind === 'ref') && TEXT_FIELDS.has(field))
    return { kind: 'text', column: col(typed.column) };
  return null;
}
