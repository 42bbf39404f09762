import type { Kysely } from 'kysely';
import type { Database, SyncStateTable } from './db-schema.js';
import type { PreparedStatements } from './prepared-statements.js';
import type { Position, SyncKey, SyncState } from './store.js';

const BLANK_STATE: SyncState = { cursor: null, full: null, incremental: null, lastSuccessAt: null, lastError: null };

const position = (updatedAt: string | null, id: string | null): Position | null =>
  updatedAt !== null && id !== null ? { updatedAt, id } : null;

/** The `sync_state` table: one row of `SyncState` per (tenant, collection, variant). */
export class SyncStates {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly stmts: PreparedStatements,
  ) {}

  /** The saved state of `key`, or a blank one when it never synced. */
  get(key: SyncKey): SyncState {
    const [r] = this.stmts.all(
      this.db
        .selectFrom('sync_state')
        .selectAll()
        .where('tenant', '=', key.tenant)
        .where('collection', '=', key.collection)
        .where('variant', '=', key.variant)
        .compile(),
    );
    if (!r) return BLANK_STATE;
    return {
      cursor: position(r.cursor_updated_at, r.cursor_id),
      full:
        r.full_run_id === null
          ? null
          : { runId: r.full_run_id, after: position(r.full_after_updated_at, r.full_after_id) },
      incremental: r.incr_active ? { after: position(r.incr_after_updated_at, r.incr_after_id) } : null,
      lastSuccessAt: r.last_success_at,
      lastError: r.last_error,
    };
  }

  /** Saves `s` as the state of `key`. */
  save(key: SyncKey, s: SyncState): void {
    const row: SyncStateTable = {
      tenant: key.tenant,
      collection: key.collection,
      variant: key.variant,
      cursor_updated_at: s.cursor?.updatedAt ?? null,
      cursor_id: s.cursor?.id ?? null,
      full_run_id: s.full?.runId ?? null,
      full_after_updated_at: s.full?.after?.updatedAt ?? null,
      full_after_id: s.full?.after?.id ?? null,
      incr_active: s.incremental ? 1 : 0,
      incr_after_updated_at: s.incremental?.after?.updatedAt ?? null,
      incr_after_id: s.incremental?.after?.id ?? null,
      last_success_at: s.lastSuccessAt,
      last_error: s.lastError,
    };
    const { tenant: _t, collection: _c, variant: _v, ...rest } = row;
    this.stmts.run(
      this.db
        .insertInto('sync_state')
        .values(row)
        .onConflict((oc) => oc.columns(['tenant', 'collection', 'variant']).doUpdateSet(rest))
        .compile(),
    );
  }
}
