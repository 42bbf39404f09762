import { type Kysely, sql } from 'kysely';
import type { Change, ChangeFeedReader, ChangeFilter, ChangeLog, EndpointState } from '../changes/change-log-port.js';
import type { CheckCounts, CheckStore, RowVersion, StoredCheck, VersionRange } from '../sync/self-check.js';
import type { ChangeKind, ChangeSource, DeleteReason, SyncKey } from '../sync/store-port.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import type { Database } from './db-schema.js';
import type { StoreEngine } from './engine.js';
import { RecordRows } from './record-rows.js';

type ChangeRowOut = Database['changes'] & { seq: number | string };

const asChange = (r: ChangeRowOut): Change => ({
  seq: Number(r.seq),
  tenant: r.tenant,
  collection: r.collection,
  id: r.id,
  variant: r.variant,
  kind: r.kind as ChangeKind,
  updated_at_before: r.updated_at_before,
  updated_at_after: r.updated_at_after,
  fields: parseFields(r.fields),
  source: r.source as ChangeSource | null,
  run_id: r.run_id,
  at: r.at,
  reason: r.kind === 'delete' ? ((r.reason ?? 'deleted') as DeleteReason) : null,
});

const parseFields = (text: string | null): string[] => {
  try {
    const v: unknown = JSON.parse(text ?? '[]');
    return Array.isArray(v) ? v.map(String) : [];
  } catch {
    return [];
  }
};

/** An integer column that may be null (PostgreSQL's `bigint` arrives as a string). */
const orNull = (v: number | string | null): number | null => (v === null ? null : Number(v));

const asEndpoint = (r: Database['webhook_endpoints']): EndpointState => ({
  id: r.id,
  tenant: r.tenant,
  url: r.url,
  deliveredSeq: Number(r.delivered_seq),
  lastDeliveryAt: r.last_delivery_at,
  lastError: r.last_error,
  lastErrorAt: r.last_error_at,
  disabledAt: r.disabled_at,
  disabledReason: r.disabled_reason,
});

/**
 * The change log, the webhook endpoints' positions and the self-check's results, over one engine's Kysely. Built
 * from a whole engine it counts live rows too; from a read-only connection (`changesReader`) it only reads.
 */
export class KyselyChangeLog implements ChangeLog, CheckStore {
  private readonly rows: RecordRows | null;
  private readonly db: Kysely<Database>;

  constructor(engine: StoreEngine | { readonly db: Kysely<Database> }) {
    this.db = engine.db;
    this.rows = 'maxParameters' in engine ? new RecordRows(engine) : null;
  }

  async read(filter: ChangeFilter): Promise<Change[]> {
    let q = this.db
      .selectFrom('changes')
      .selectAll()
      .where('seq', '>', filter.since ?? 0);
    if (filter.upTo !== undefined) q = q.where('seq', '<=', filter.upTo);
    if (filter.tenants?.length) q = q.where('tenant', 'in', filter.tenants);
    if (filter.collections?.length) q = q.where('collection', 'in', filter.collections);
    const reasons = filter.reasons;
    if (reasons?.length) {
      // Reasons narrow the deletes; the other kinds asked for pass as they are (none when no kinds are given).
      const others = (filter.kinds ?? []).filter((k) => k !== 'delete');
      q = q.where((eb) =>
        eb.or([
          eb.and([eb('kind', '=', 'delete'), eb('reason', 'in', reasons)]),
          ...(others.length > 0 ? [eb('kind', 'in', others)] : []),
        ]),
      );
      if (filter.kinds?.length && !filter.kinds.includes('delete')) q = q.where('kind', 'in', filter.kinds);
    } else if (filter.kinds?.length) q = q.where('kind', 'in', filter.kinds);
    q = q.orderBy('seq');
    if (filter.limit !== undefined) q = q.limit(filter.limit);
    return (await q.execute()).map((r) => asChange(r as ChangeRowOut));
  }

  async lastSeq(): Promise<number> {
    const r = await this.db
      .selectFrom('changes')
      .select(sql<number | string | null>`max(seq)`.as('seq'))
      .executeTakeFirst();
    return Number(r?.seq ?? 0);
  }

  async firstSeq(): Promise<number | null> {
    const r = await this.db
      .selectFrom('changes')
      .select(sql<number | string | null>`min(seq)`.as('seq'))
      .executeTakeFirst();
    return r?.seq === null || r?.seq === undefined ? null : Number(r.seq);
  }

  async prune(before: string): Promise<number> {
    const r = await this.db.deleteFrom('changes').where('at', '<', before).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  async endpoint(id: string, tenant: string, url: string, now: string): Promise<EndpointState> {
    const found = await this.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
    if (found) return asEndpoint(found);
    const start = await this.lastSeq();
    await this.db
      .insertInto('webhook_endpoints')
      .values({ id, tenant, url, delivered_seq: start, created_at: now })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
    const row = await this.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    return asEndpoint(row);
  }

  async endpoints(): Promise<EndpointState[]> {
    const rows = await this.db.selectFrom('webhook_endpoints').selectAll().orderBy('tenant').orderBy('url').execute();
    return rows.map(asEndpoint);
  }

  async advanceEndpoint(id: string, seq: number, at: string, delivered: boolean): Promise<void> {
    await this.db
      .updateTable('webhook_endpoints')
      .set({
        delivered_seq: sql<number>`case when delivered_seq < ${seq} then ${seq} else delivered_seq end`,
        ...(delivered ? { last_delivery_at: at } : {}),
      })
      .where('id', '=', id)
      .execute();
  }

  async endpointFailed(id: string, error: string, at: string): Promise<void> {
    await this.db
      .updateTable('webhook_endpoints')
      .set({ last_error: error, last_error_at: at })
      .where('id', '=', id)
      .execute();
  }

  async disableEndpoint(id: string, reason: string, at: string): Promise<void> {
    await this.db
      .updateTable('webhook_endpoints')
      .set({ disabled_at: at, disabled_reason: reason })
      .where('id', '=', id)
      .execute();
  }

  async enableEndpoint(id: string): Promise<boolean> {
    const r = await this.db
      .updateTable('webhook_endpoints')
      .set({ disabled_at: null, disabled_reason: null })
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  countLive(key: SyncKey): Promise<number> {
    if (!this.rows) return Promise.reject(new Error('countLive needs a store engine, not a read-only connection'));
    return this.rows.countLive(this.db, key);
  }

  liveVersions(key: SyncKey, range: VersionRange): Promise<RowVersion[]> {
    if (!this.rows) return Promise.reject(new Error('liveVersions needs a store engine, not a read-only connection'));
    return this.rows.liveVersions(this.db, key, range);
  }

  async saveChecks(tenant: string, rows: readonly CheckCounts[], at: string): Promise<void> {
    if (rows.length === 0) return;
    await this.db
      .insertInto('mirror_checks')
      .values(
        rows.map((r) => ({
          tenant,
          collection: r.collection,
          variant: r.variant,
          local: r.local,
          upstream: r.upstream,
          drift: r.drift,
          missing: r.missing,
          extra: r.extra,
          stale: r.stale,
          checked_at: at,
        })),
      )
      .onConflict((oc) =>
        oc.columns(['tenant', 'collection', 'variant']).doUpdateSet({
          local: (eb) => eb.ref('excluded.local'),
          upstream: (eb) => eb.ref('excluded.upstream'),
          drift: (eb) => eb.ref('excluded.drift'),
          missing: (eb) => eb.ref('excluded.missing'),
          extra: (eb) => eb.ref('excluded.extra'),
          stale: (eb) => eb.ref('excluded.stale'),
          checked_at: (eb) => eb.ref('excluded.checked_at'),
        }),
      )
      .execute();
  }

  async lastChecks(): Promise<StoredCheck[]> {
    const rows = await this.db
      .selectFrom('mirror_checks')
      .selectAll()
      .orderBy('tenant')
      .orderBy('collection')
      .orderBy('variant')
      .execute();
    return rows.map((r) => ({
      tenant: r.tenant,
      collection: r.collection as CollectionSlug,
      variant: r.variant,
      local: Number(r.local),
      upstream: Number(r.upstream),
      drift: Number(r.drift),
      missing: orNull(r.missing),
      extra: orNull(r.extra),
      stale: orNull(r.stale),
      checkedAt: r.checked_at,
    }));
  }
}

/** The change feed over a read-only connection: reads only (`changes`, `status`). */
export const changesReader = (db: Kysely<Database>): ChangeFeedReader => new KyselyChangeLog({ db });
