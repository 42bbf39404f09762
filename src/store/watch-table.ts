import { type Kysely, sql } from 'kysely';
import { PUBLISHED } from '../sync/store-port.js';
import type { WatchStatusRow } from '../sync/watch-port.js';
import type { Clock } from '../vocabulary/clock.js';
import type { TenantSlug } from '../vocabulary/ids.js';
import type { Database } from './db-schema.js';
import { expiredOrMine } from './lease-table.js';

const at = (ms: number): string => new Date(ms).toISOString();

/** Rows per statement: three parameters each, far inside both engines' limits. */
const CHUNK = 300;

const chunks = <T>(xs: readonly T[]): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += CHUNK) out.push(xs.slice(i, i + CHUNK));
  return out;
};

/** The last probe that succeeded, of any holder: the newer wins (a paused holder's older news, or none, loses). */
const NEWEST_FRESH = sql<string | null>`case
  when watch_state.last_fresh_at is null or excluded.last_fresh_at > watch_state.last_fresh_at
  then excluded.last_fresh_at else watch_state.last_fresh_at end`;

/**
 * The first probe that succeeded after the collection's last failure (its published row in `sync_state`): kept while
 * it is later than that failure, else the newest. `status` compares it with the failure again when it reads.
 */
const FRESH_SINCE = sql<string | null>`case
  when watch_state.fresh_since > (
    select s.last_error_at from sync_state s
    where s.tenant = watch_state.tenant and s.collection = watch_state.collection and s.variant = ${PUBLISHED}
  ) then watch_state.fresh_since else ${NEWEST_FRESH} end`;

/**
 * The `watch_owners` and `watch_state` tables. Ownership is a lease per tenant decided in SQL (one upsert per 300
 * tenants, whichever engine): a row changes hands only once it has expired, so two workers never watch one tenant.
 */
export const watchTables = {
  async claim(
    db: Kysely<Database>,
    tenants: readonly TenantSlug[],
    holder: string,
    ttlMs: number,
    clock: Clock,
  ): Promise<Set<TenantSlug>> {
    const held = new Set<TenantSlug>();
    const now = clock.now();
    for (const part of chunks(tenants)) {
      const rows = await db
        .insertInto('watch_owners')
        .values(part.map((tenant) => ({ tenant, holder, expires_at: at(now + ttlMs) })))
        .onConflict((oc) =>
          oc
            .column('tenant')
            .doUpdateSet({
              holder: (eb) => eb.ref('excluded.holder'),
              expires_at: (eb) => eb.ref('excluded.expires_at'),
            })
            .where(expiredOrMine('watch_owners', now)),
        )
        .returning(['tenant'])
        .execute();
      for (const r of rows) held.add(r.tenant as TenantSlug);
    }
    return held;
  },

  async release(db: Kysely<Database>, holder: string): Promise<void> {
    await db
      .updateTable('watch_owners')
      .set({ expires_at: at(0) })
      .where('holder', '=', holder)
      .execute();
  },

  async save(db: Kysely<Database>, rows: readonly WatchStatusRow[], now: string): Promise<void> {
    for (const part of chunks(rows)) {
      await db
        .insertInto('watch_state')
        .values(
          part.map((r) => ({
            tenant: r.tenant,
            collection: r.collection,
            holder: r.holder,
            last_probe_at: r.lastProbeAt,
            last_change_at: r.lastChangeAt,
            interval_ms: Math.round(r.intervalMs),
            probes: r.probes,
            updated_at: now,
            last_fresh_at: r.lastFreshAt,
            fresh_since: r.lastFreshAt,
          })),
        )
        .onConflict((oc) =>
          oc.columns(['tenant', 'collection']).doUpdateSet({
            holder: (eb) => eb.ref('excluded.holder'),
            last_probe_at: (eb) => eb.ref('excluded.last_probe_at'),
            last_change_at: (eb) => eb.ref('excluded.last_change_at'),
            interval_ms: (eb) => eb.ref('excluded.interval_ms'),
            probes: (eb) => eb.ref('excluded.probes'),
            updated_at: (eb) => eb.ref('excluded.updated_at'),
            // Both read the row as it was: SET sees the old values on either engine.
            last_fresh_at: NEWEST_FRESH,
            fresh_since: FRESH_SINCE,
          }),
        )
        .execute();
    }
  },

  /** The watch of every tenant and collection, as last saved. */
  async read(db: Kysely<Database>): Promise<(WatchStatusRow & { readonly updatedAt: string })[]> {
    const rows = await db.selectFrom('watch_state').selectAll().execute();
    return rows.map((r) => ({
      tenant: r.tenant as TenantSlug,
      collection: r.collection as WatchStatusRow['collection'],
      holder: r.holder,
      lastProbeAt: r.last_probe_at,
      lastChangeAt: r.last_change_at,
      lastFreshAt: r.last_fresh_at,
      intervalMs: Number(r.interval_ms),
      probes: Number(r.probes),
      updatedAt: r.updated_at,
    }));
  },
};
