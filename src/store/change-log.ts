import { setTimeout as sleep } from 'node:timers/promises';
import { type Kysely, type Selectable, sql } from 'kysely';
import type { Change, ChangeFeedReader, ChangeFilter, ChangeLog, EndpointState } from '../changes/change-log-port.js';
import { UnderstudyError } from '../errors.js';
import type { CheckCounts, CheckStore, RowVersion, StoredCheck, VersionRange } from '../sync/self-check.js';
import type { ChangeKind, ChangeSource, DeleteReason, SyncKey } from '../sync/store-port.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import type { ChangeHorizon } from './change-horizon.js';
import type { Database } from './db-schema.js';
import type { MirrorConnection, StoreEngine } from './engine.js';
import { RecordRows } from './record-rows.js';

/** The columns a change is read from (not its transaction's id and floor, which only the feed's end needs). */
const CHANGE_COLUMNS = [
  'seq',
  'tenant',
  'collection',
  'id',
  'variant',
  'kind',
  'updated_at_before',
  'updated_at_after',
  'fields',
  'source',
  'run_id',
  'at',
  'reason',
] as const;

type ChangeRowOut = Pick<Selectable<Database['changes']>, (typeof CHANGE_COLUMNS)[number]> & { seq: number | string };

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

/** How long `settle` waits between two looks, at first and at most. */
const SETTLE_POLL_MS = { first: 5, max: 250 };

/**
 * The change log, the webhook endpoints' positions and the self-check's results, over one engine's Kysely. Built
 * from a whole engine it counts live rows too; from a read-only connection (`changesReader`) it only reads.
 *
 * Where the engine has a change horizon (PostgreSQL: writers commit in parallel), every read stops where the feed
 * has settled, so a reader moving its position to the last seq it saw never passes a seq that may still commit.
 */
export class KyselyChangeLog implements ChangeLog, CheckStore {
  private readonly rows: RecordRows | null;
  private readonly db: Kysely<Database>;
  private readonly horizon: ChangeHorizon | undefined;
  /** Every seq at or below it has settled (known so far: it only grows). */
  private known = 0;
  /** The mark taken while changes wait (see `settledAfter`), until it has passed. */
  private pending: { readonly seq: number; readonly mark: string } | null = null;

  constructor(engine: StoreEngine | MirrorConnection) {
    this.db = engine.db;
    this.horizon = engine.changeHorizon;
    this.rows = 'maxParameters' in engine ? new RecordRows(engine) : null;
  }

  /**
   * The greatest seq H >= since such that every seq in (since, H] has settled (`ChangeHorizon.settled`). While
   * changes wait behind a seq in flight or a hole, a mark is kept; once it has passed, every seq up to it has
   * settled, holes and all, so the feed goes on without waiting for another writer.
   */
  private async settledAfter(horizon: ChangeHorizon, since: number): Promise<number> {
    if (this.pending && (await horizon.passed(this.db, this.pending.mark))) {
      this.known = Math.max(this.known, this.pending.seq);
      this.pending = null;
    }
    const known = this.known;
    const from = Math.max(since, known);
    const { settled, last } = await horizon.settled(this.db, from);
    // Only a look from a settled seq says that everything below its end has settled.
    if (from === known) this.known = Math.max(this.known, settled);
    if (last > settled && !this.pending) this.pending = await horizon.mark(this.db);
    return settled;
  }

  async read(filter: ChangeFilter): Promise<Change[]> {
    const since = filter.since ?? 0;
    const settled = this.horizon ? await this.settledAfter(this.horizon, since) : undefined;
    const upTo = settled === undefined ? filter.upTo : Math.min(settled, filter.upTo ?? settled);
    let q = this.db.selectFrom('changes').select(CHANGE_COLUMNS).where('seq', '>', since);
    if (upTo !== undefined) q = q.where('seq', '<=', upTo);
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
    if (this.horizon) return this.settledAfter(this.horizon, this.known);
    const r = await this.db
      .selectFrom('changes')
      .select(sql<number | string | null>`max(seq)`.as('seq'))
      .executeTakeFirst();
    return Number(r?.seq ?? 0);
  }

  async settle(opts: { readonly signal?: AbortSignal } = {}): Promise<number> {
    const horizon = this.horizon;
    if (!horizon) return this.lastSeq();
    const { last } = await horizon.settled(this.db, this.known);
    for (let wait = SETTLE_POLL_MS.first; ; wait = Math.min(wait * 2, SETTLE_POLL_MS.max)) {
      const end = await this.settledAfter(horizon, this.known);
      if (end >= last) return end;
      await sleep(wait, undefined, opts.signal ? { signal: opts.signal } : {}).catch((err: unknown) => {
        throw new UnderstudyError('US_ABORTED', 'stopped waiting for the change feed to settle', { cause: err });
      });
    }
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

/** The change feed over a read-only connection: reads only (`changes`, `status`, `serve`). */
export const changesReader = (connection: MirrorConnection): ChangeFeedReader => new KyselyChangeLog(connection);
