import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { RowVersion, VersionRange } from '../sync/self-check.js';
import { PUBLISHED, type SyncKey } from '../sync/store-port.js';
import { collectionTable, type Database } from './db-schema.js';

/** Ids per `IN (…)` list: under SQLite's and PostgreSQL's parameter limits with the key's scope on top. */
const IDS_PER_QUERY = 1000;

/** A query over one key's live rows, as `doc_variants` types it: every record table has the columns it reads. */
type LiveRows = SelectQueryBuilder<Database, 'doc_variants', { id: string; updated_at: string | null }>;

const scopedTo = (db: Kysely<Database>, key: SyncKey): LiveRows =>
  key.variant === PUBLISHED
    ? (db
        .selectFrom(collectionTable(key.collection))
        .select(['id', 'updated_at'])
        .where('tenant', '=', key.tenant)
        .where('deleted_at', 'is', null) as unknown as LiveRows)
    : db
        .selectFrom('doc_variants')
        .select(['id', 'updated_at'])
        .where('collection', '=', key.collection)
        .where('tenant', '=', key.tenant)
        .where('variant', '=', key.variant)
        .where('deleted_at', 'is', null);

/**
 * The id and `updated_at` of the live rows of `key` in `range`: published rows in the collection's table (scoped by
 * tenant), other variants in `doc_variants`. A dated range reads the `(tenant, updated_at, id)` index; `updated_at`
 * text compares as an instant (it is normalised to UTC with milliseconds).
 */
export async function liveVersions(db: Kysely<Database>, key: SyncKey, range: VersionRange): Promise<RowVersion[]> {
  const rows: { id: string; updated_at: string | null }[] = [];
  if ('ids' in range) {
    for (let i = 0; i < range.ids.length; i += IDS_PER_QUERY)
      rows.push(
        ...(await scopedTo(db, key)
          .where('id', 'in', range.ids.slice(i, i + IDS_PER_QUERY))
          .execute()),
      );
  } else if ('undated' in range) {
    rows.push(...(await scopedTo(db, key).where('updated_at', 'is', null).execute()));
  } else {
    let q = scopedTo(db, key).where('updated_at', 'is not', null);
    if (range.from !== null) q = q.where('updated_at', '>=', range.from);
    if (range.before !== null) q = q.where('updated_at', '<', range.before);
    rows.push(...(await q.execute()));
  }
  return rows.map((r) => ({ id: String(r.id), updatedAt: r.updated_at }));
}
