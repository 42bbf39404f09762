import type { Kysely } from 'kysely';
import { BLANK_SYNC_STATE, type Position, type SyncKey, type SyncState } from '../sync/store-port.js';
import type { Database, SyncStateTable } from './db-schema.js';

const position = (updatedAt: string | null, id: string | null): Position | null =>
  updatedAt !== null && id !== null ? { updatedAt, id } : null;

/** The `sync_state` table: one row of `SyncState` per (tenant, collection, variant). */
export const syncStates = {
  /** The saved state of `key`, or a blank one when it never synced. */
  async get(db: Kysely<Database>, key: SyncKey): Promise<SyncState> {
    const r = await db
      .selectFrom('sync_state')
      .selectAll()
      .where('tenant', '=', key.tenant)
      .where('collection', '=', key.collection)
      .where('variant', '=', key.variant)
      .executeTakeFirst();
    if (!r) return BLANK_SYNC_STATE;
    return {
      cursor: position(r.cursor_updated_at, r.cursor_id),
      full:
        r.full_run_id === null
          ? null
          : {
              runId: r.full_run_id,
              // A pass begun before passes recorded their start: nothing written since is provably its own.
              startedAt: r.full_started_at ?? '1970-01-01T00:00:00.000Z',
              after: position(r.full_after_updated_at, r.full_after_id),
            },
      incremental: Number(r.incr_active) ? { after: position(r.incr_after_updated_at, r.incr_after_id) } : null,
      lastSuccessAt: r.last_success_at,
      lastError: r.last_error,
      lastErrorAt: r.last_error_at,
      lastErrorVariant: r.last_error_variant,
    };
  },

  /** Saves `s` as the state of `key`. */
  async save(db: Kysely<Database>, key: SyncKey, s: SyncState): Promise<void> {
    const row: SyncStateTable = {
      tenant: key.tenant,
      collection: key.collection,
      variant: key.variant,
      cursor_updated_at: s.cursor?.updatedAt ?? null,
      cursor_id: s.cursor?.id ?? null,
      full_run_id: s.full?.runId ?? null,
      full_started_at: s.full?.startedAt ?? null,
      full_after_updated_at: s.full?.after?.updatedAt ?? null,
      full_after_id: s.full?.after?.id ?? null,
      incr_active: s.incremental ? 1 : 0,
      incr_after_updated_at: s.incremental?.after?.updatedAt ?? null,
      incr_after_id: s.incremental?.after?.id ?? null,
      last_success_at: s.lastSuccessAt,
      last_error: s.lastError,
      // A run that went through clears the failure's time and variant with it (it spreads the state it read).
      last_error_at: s.lastError === null ? null : s.lastErrorAt,
      last_error_variant: s.lastError === null ? null : s.lastErrorVariant,
    };
    const { tenant: _t, collection: _c, variant: _v, ...rest } = row;
    await db
      .insertInto('sync_state')
      .values(row)
      .onConflict((oc) => oc.columns(['tenant', 'collection', 'variant']).doUpdateSet(rest))
      .execute();
  },
};
