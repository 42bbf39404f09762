import { type Kysely, sql } from 'kysely';
import { type MirrorStatus, type MirrorWatch, PUBLISHED } from '../sync/store-port.js';
import { COLLECTIONS, type CollectionSlug } from '../vocabulary/collections.js';
import { collectionTable, type Database } from './db-schema.js';
import { watchTables } from './watch-table.js';

/** Live and deleted counts, last success and last error, and the watch, per tenant and collection, in collection order. */
export async function mirrorStatus(db: Kysely<Database>): Promise<MirrorStatus[]> {
  const byKey = new Map<string, { tenant: string; collection: CollectionSlug } & Record<string, unknown>>();
  const entry = (tenant: string, collection: CollectionSlug) => {
    const k = `${tenant}\u0000${collection}`;
    let e = byKey.get(k);
    if (!e) {
      e = { tenant, collection, live: 0, deleted: 0, lastSuccessAt: null, lastError: null };
      byKey.set(k, e);
    }
    return e;
  };
  for (const c of COLLECTIONS) {
    const rows = await db
      .selectFrom(collectionTable(c))
      .select([
        'tenant',
        sql<number>`sum(case when deleted_at is null then 1 else 0 end)`.as('live'),
        sql<number>`sum(case when deleted_at is null then 0 else 1 end)`.as('deleted'),
      ])
      .groupBy('tenant')
      .execute();
    for (const r of rows) Object.assign(entry(r.tenant, c), { live: r.live, deleted: r.deleted });
  }
  const states = await db
    .selectFrom('sync_state')
    .select(['tenant', 'collection', 'last_success_at', 'last_error'])
    .where('variant', '=', PUBLISHED)
    .execute();
  for (const s of states) {
    if (!(COLLECTIONS as readonly string[]).includes(s.collection)) continue;
    Object.assign(entry(s.tenant, s.collection as CollectionSlug), {
      lastSuccessAt: s.last_success_at,
      lastError: s.last_error,
    });
  }
  for (const w of await watchTables.read(db)) {
    if (!(COLLECTIONS as readonly string[]).includes(w.collection)) continue;
    const { tenant: _t, collection: _c, ...watch } = w;
    entry(w.tenant, w.collection).watch = watch;
  }
  const order = (c: CollectionSlug) => COLLECTIONS.indexOf(c);
  return [...byKey.values()]
    .map(
      (e): MirrorStatus => ({
        tenant: e.tenant,
        collection: e.collection,
        live: Number(e.live),
        deleted: Number(e.deleted),
        lastSuccessAt: (e.lastSuccessAt as string | null) ?? null,
        lastError: (e.lastError as string | null) ?? null,
        watch: (e.watch as MirrorWatch | undefined) ?? null,
      }),
    )
    .sort((a, b) => (a.tenant < b.tenant ? -1 : a.tenant > b.tenant ? 1 : order(a.collection) - order(b.collection)));
}
