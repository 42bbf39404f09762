import { type Kysely, sql } from 'kysely';
import { type MirrorStatus, type MirrorWatch, PUBLISHED } from '../sync/store-port.js';
import { COLLECTIONS, type CollectionSlug } from '../vocabulary/collections.js';
import { collectionTable, type Database } from './db-schema.js';
import { watchTables } from './watch-table.js';

type Entry = { tenant: string; collection: CollectionSlug } & Record<string, unknown>;

const known = (collection: string): collection is CollectionSlug =>
  (COLLECTIONS as readonly string[]).includes(collection);

/** Live and deleted counts, last success and last error, and the watch, per tenant and collection, in collection order. */
export async function mirrorStatus(db: Kysely<Database>): Promise<MirrorStatus[]> {
  const byKey = new Map<string, Entry>();
  const entry = (tenant: string, collection: CollectionSlug) => {
    const k = `${tenant}\u0000${collection}`;
    let e = byKey.get(k);
    if (!e) {
      e = { tenant, collection, live: 0, deleted: 0, lastSuccessAt: null, lastError: null };
      byKey.set(k, e);
    }
    return e;
  };
  for (const c of COLLECTIONS)
    for (const r of await rowCounts(db, c)) Object.assign(entry(r.tenant, c), { live: r.live, deleted: r.deleted });
  for (const s of await publishedStates(db)) {
    if (!known(s.collection)) continue;
    Object.assign(entry(s.tenant, s.collection), {
      lastSuccessAt: s.last_success_at,
      lastError: s.last_error,
      lastErrorAt: s.last_error === null ? null : s.last_error_at,
      freshSince: s.fresh_since,
    });
  }
  for (const w of await watchTables.read(db)) {
    if (!known(w.collection)) continue;
    const { tenant: _t, collection: _c, ...watch } = w;
    entry(w.tenant, w.collection).watch = watch;
  }
  const order = (c: CollectionSlug) => COLLECTIONS.indexOf(c);
  return [...byKey.values()]
    .map(toStatus)
    .sort((a, b) => (a.tenant < b.tenant ? -1 : a.tenant > b.tenant ? 1 : order(a.collection) - order(b.collection)));
}

/** Live and tombstoned rows of one collection, per tenant. */
const rowCounts = (db: Kysely<Database>, c: CollectionSlug) =>
  db
    .selectFrom(collectionTable(c))
    .select([
      'tenant',
      sql<number>`sum(case when deleted_at is null then 1 else 0 end)`.as('live'),
      sql<number>`sum(case when deleted_at is null then 0 else 1 end)`.as('deleted'),
    ])
    .groupBy('tenant')
    .execute();

/**
 * The published variant's state of every tenant and collection, and since when a watch probe has cleared its last
 * failure: a probe that succeeded later than the failure (the later instant wins, decided here for both engines),
 * when the failure was the published variant's, the one watch probes.
 */
const publishedStates = (db: Kysely<Database>) =>
  db
    .selectFrom('sync_state as s')
    .leftJoin('watch_state as w', (j) =>
      j.onRef('w.tenant', '=', 's.tenant').onRef('w.collection', '=', 's.collection'),
    )
    .select([
      's.tenant',
      's.collection',
      's.last_success_at',
      's.last_error',
      's.last_error_at',
      sql<string | null>`case
        when s.last_error is not null and s.last_error_variant = ${PUBLISHED} and w.fresh_since > s.last_error_at
        then w.fresh_since end`.as('fresh_since'),
    ])
    .where('s.variant', '=', PUBLISHED)
    .execute();

const toStatus = (e: Entry): MirrorStatus => ({
  tenant: e.tenant,
  collection: e.collection,
  live: Number(e.live),
  deleted: Number(e.deleted),
  lastSuccessAt: (e.lastSuccessAt as string | null) ?? null,
  lastError: (e.lastError as string | null) ?? null,
  lastErrorAt: (e.lastErrorAt as string | null) ?? null,
  freshSince: (e.freshSince as string | null) ?? null,
  watch: (e.watch as MirrorWatch | undefined) ?? null,
});
