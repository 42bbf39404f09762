import { sql } from 'kysely';
import { PUBLISHED } from '../../sync/store-port.js';
import { collectionTable } from '../db-schema.js';
import type { Sql } from './json-sql.js';
import type { ReadView } from './read-spec.js';

/** The table of a view under the alias `row`, and the conditions that scope it to the view's live rows. */
export function readSource(view: ReadView, row: string): { table: Sql; scope: Sql } {
  const r = (c: string) => sql.ref(`${row}.${c}`);
  if (view.variant === PUBLISHED)
    return {
      table: sql`${sql.table(collectionTable(view.collection))} as ${sql.ref(row)}`,
      scope: sql`${r('tenant')} = ${view.tenant} and ${r('deleted_at')} is null`,
    };
  return {
    table: sql`${sql.table('doc_variants')} as ${sql.ref(row)}`,
    scope: sql`${r('collection')} = ${view.collection} and ${r('tenant')} = ${view.tenant} and ${r('variant')} = ${view.variant} and ${r('deleted_at')} is null`,
  };
}
