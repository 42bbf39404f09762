import { type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely';
import type { Lease } from '../sync/store-port.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import type { TenantSlug } from '../vocabulary/ids.js';
import type { Database } from './db-schema.js';

const at = (ms: number): string => new Date(ms).toISOString();

/**
 * The one rule of a lease upsert (sync leases, watch owners): the row changes hands only when it has expired at
 * `now`, is the caller's own already, or (a takeover) is held by `takeOverFrom`. For `onConflict(…).where(…)`.
 */
export const expiredOrMine = (
  table: 'sync_leases' | 'watch_owners',
  now: number,
  takeOverFrom?: string,
): RawBuilder<SqlBool> => {
  const holder = sql.ref(`${table}.holder`);
  const others = takeOverFrom === undefined ? sql`` : sql` or ${holder} = ${takeOverFrom}`;
  return sql<SqlBool>`(${sql.ref(`${table}.expires_at`)} < ${at(now)} or ${holder} = excluded.holder${others})`;
};

/**
 * The `sync_leases` table: one lease per tenant and collection, held by one run at a time. Taking a lease that
 * changes hands bumps its fencing token; every fenced commit re-checks the token inside its own transaction (and
 * renews the lease), so a run that lost its lease can commit nothing. Lease rows are transactional (no session-level
 * locks a connection pooler could leak), and on PostgreSQL the row lock serialises a commit and a takeover.
 * Expiry is compared in SQL with the `now` the caller passes (milliseconds, from the store's clock).
 */
export const leases = {
  /** Takes the lease when it is free, expired, or `holder`'s own; null when another live holder has it. */
  async acquire(
    db: Kysely<Database>,
    tenant: TenantSlug,
    collection: CollectionSlug,
    holder: string,
    ttlMs: number,
    now: number,
    takeOverFrom?: string,
  ): Promise<Lease | null> {
    const r = await db
      .insertInto('sync_leases')
      .values({ tenant, collection, holder, token: 1, acquired_at: at(now), expires_at: at(now + ttlMs) })
      .onConflict((oc) =>
        oc
          .columns(['tenant', 'collection'])
          .doUpdateSet({
            holder: (eb) => eb.ref('excluded.holder'),
            token: sql<number>`case when sync_leases.holder = excluded.holder then sync_leases.token
              else sync_leases.token + 1 end`,
            acquired_at: (eb) => eb.ref('excluded.acquired_at'),
            expires_at: (eb) => eb.ref('excluded.expires_at'),
          })
          .where(expiredOrMine('sync_leases', now, takeOverFrom)),
      )
      .returning(['token'])
      .executeTakeFirst();
    return r ? { tenant, collection, holder, token: Number(r.token), ttlMs } : null;
  },

  /** The live holder of a lease at `now` and when it expires, or null. */
  async holder(
    db: Kysely<Database>,
    tenant: TenantSlug,
    collection: CollectionSlug,
    now: number,
  ): Promise<{ holder: string; expiresAt: string } | null> {
    const r = await db
      .selectFrom('sync_leases')
      .select(['holder', 'expires_at'])
      .where('tenant', '=', tenant)
      .where('collection', '=', collection)
      .where('expires_at', '>=', at(now))
      .executeTakeFirst();
    return r ? { holder: r.holder, expiresAt: r.expires_at } : null;
  },

  /** Extends the lease by its `ttlMs` from `now` while it still holds `lease.token`; false when it changed hands. */
  async renew(db: Kysely<Database>, lease: Lease, now: number): Promise<boolean> {
    const r = await db
      .updateTable('sync_leases')
      .set({ expires_at: at(now + lease.ttlMs) })
      .where('tenant', '=', lease.tenant)
      .where('collection', '=', lease.collection)
      .where('holder', '=', lease.holder)
      .where('token', '=', lease.token)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  },

  /** Ends the lease at once (expires it) when it still holds `lease.token`. */
  async release(db: Kysely<Database>, lease: Lease): Promise<void> {
    await db
      .updateTable('sync_leases')
      .set({ expires_at: at(0) })
      .where('tenant', '=', lease.tenant)
      .where('collection', '=', lease.collection)
      .where('holder', '=', lease.holder)
      .where('token', '=', lease.token)
      .execute();
  },
};
