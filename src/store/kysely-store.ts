import { closeOnce } from '../close-all.js';
import { describeError, isUnderstudyError, LeaseLostError, UnderstudyError } from '../errors.js';
import type {
  ChangeKind,
  Lease,
  MirrorStatus,
  Position,
  Store,
  SyncKey,
  SyncRunRow,
  SyncState,
  WriteBatch,
  WriteResult,
} from '../sync/store-port.js';
import { type Clock, systemClock } from '../vocabulary/clock.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import { parseExactJson } from '../vocabulary/exact-json.js';
import type { TenantSlug, UpstreamDoc } from '../vocabulary/ids.js';
import { inTransaction, type StoreEngine } from './engine.js';
import { leases } from './lease-table.js';
import { RecordRows } from './record-rows.js';
import { appendRun } from './run-log.js';
import { mirrorStatus } from './status-queries.js';
import { syncStates } from './sync-state-table.js';
import { themeSchemas } from './theme-schema-table.js';

const SCAN_CHUNK = 500;

const storeError = (what: string, err: unknown): UnderstudyError =>
  isUnderstudyError(err)
    ? err
    : new UnderstudyError('US_STORE', `store: ${what} failed: ${describeError(err)}`, { cause: err });

/**
 * The mirror over one engine (SQLite or PostgreSQL): every method is one transaction on one connection, every query
 * is built with Kysely and runs on both engines. The write rules (newer wins, tombstones, fencing) are SQL, so they
 * hold with any number of writers.
 */
export class KyselyStore implements Store {
  private readonly rows: RecordRows;
  private readonly closeEngine = closeOnce(() => this.engine.close());

  /** `clock`: what lease expiry and renewal are reckoned by (a test's clock, moved by hand; default the real one). */
  constructor(
    private readonly engine: StoreEngine,
    private readonly clock: Clock = systemClock,
  ) {
    this.rows = new RecordRows(engine);
  }

  private async tx<T>(what: string, fn: Parameters<typeof inTransaction<T>>[1]): Promise<T> {
    try {
      return await inTransaction(this.engine, fn);
    } catch (err) {
      throw storeError(what, err);
    }
  }

  private async read<T>(what: string, fn: Parameters<typeof inTransaction<T>>[1]): Promise<T> {
    try {
      return await fn(this.engine.db);
    } catch (err) {
      throw storeError(what, err);
    }
  }

  getSyncState(key: SyncKey): Promise<SyncState> {
    return this.read('getSyncState', (db) => syncStates.get(db, key));
  }

  write(key: SyncKey, batch: WriteBatch): Promise<WriteResult> {
    const now = batch.now ?? new Date().toISOString();
    return this.tx(`write ${key.collection}`, async (db) => {
      const changesRows =
        (batch.upserts?.length ?? 0) > 0 || (batch.deletes?.length ?? 0) > 0 || !!batch.tombstoneUnseen;
      // Before the fence: the first write gives the transaction its id, and the note must come before it.
      if (changesRows) await this.engine.noteChanges?.(db);
      // Then the fence: it also takes the write lock before anything is read.
      if (batch.fence && !(await leases.renew(db, batch.fence, this.clock.now())))
        throw new LeaseLostError(batch.fence);
      const origin = { source: batch.source ?? 'sync', runId: batch.runId ?? null };
      const changes: { id: string; kind: ChangeKind }[] = [];
      let unchanged = 0;
      if (batch.upserts && batch.upserts.length > 0) {
        const r = await this.rows.upsert(db, key, batch.upserts, {
          fetchedAt: batch.fetchedAt ?? now,
          now,
          seenBy: batch.seenBy ?? null,
          origin,
        });
        for (const w of r.written) changes.push({ id: w.id, kind: w.kind as ChangeKind });
        unchanged = r.unchanged;
      }
      if (batch.deletes && batch.deletes.length > 0) {
        for (const id of await this.rows.tombstone(db, key, batch.deletes, now, origin, batch.deleteReason))
          changes.push({ id, kind: 'delete' });
      }
      if (batch.tombstoneUnseen) {
        for (const id of await this.rows.tombstoneUnseen(db, key, batch.tombstoneUnseen, now, origin))
          changes.push({ id, kind: 'delete' });
      }
      if (batch.next) await syncStates.save(db, key, batch.next);
      const count = (k: ChangeKind) => changes.filter((c) => c.kind === k).length;
      return {
        changes,
        inserted: count('insert'),
        updated: count('update'),
        revived: count('revive'),
        deleted: count('delete'),
        unchanged,
      };
    });
  }

  acquireLease(
    tenant: TenantSlug,
    collection: CollectionSlug,
    holder: string,
    ttlMs: number,
    opts: { readonly takeOverFrom?: string } = {},
  ): Promise<Lease | null> {
    return this.tx('acquireLease', (db) =>
      leases.acquire(db, tenant, collection, holder, ttlMs, this.clock.now(), opts.takeOverFrom),
    );
  }

  leaseHolder(tenant: TenantSlug, collection: CollectionSlug): Promise<{ holder: string; expiresAt: string } | null> {
    return this.read('leaseHolder', (db) => leases.holder(db, tenant, collection, this.clock.now()));
  }

  renewLease(lease: Lease): Promise<boolean> {
    return this.tx('renewLease', (db) => leases.renew(db, lease, this.clock.now()));
  }

  releaseLease(lease: Lease): Promise<void> {
    return this.tx('releaseLease', (db) => leases.release(db, lease));
  }

  unseenIds(key: SyncKey, runId: string, startedAt: string): Promise<string[]> {
    return this.read(`unseenIds ${key.collection}`, (db) => this.rows.unseenIds(db, key, runId, startedAt));
  }

  countUpdatedBetween(key: SyncKey, from: string, to: string): Promise<number> {
    return this.read('countUpdatedBetween', (db) => this.rows.countUpdatedBetween(db, key, from, to));
  }

  versionsUpdatedBetween(key: SyncKey, from: string, to: string): Promise<Position[]> {
    return this.read('versionsUpdatedBetween', (db) => this.rows.versionsUpdatedBetween(db, key, from, to));
  }

  async liveIds(key: SyncKey): Promise<Set<string>> {
    const rows = await this.read('liveIds', (db) => this.rows.liveChunk(db, key, null, -1, false));
    return new Set(rows.map((r) => r.id));
  }

  async scanDocs(key: SyncKey, fn: (doc: UpstreamDoc) => void): Promise<void> {
    // Keyset chunks rather than one open cursor, so `fn` may call the store between chunks.
    let after: string | null = null;
    for (;;) {
      const rows = await this.read('scanDocs', (db) => this.rows.liveChunk(db, key, after, SCAN_CHUNK, true));
      for (const r of rows) fn(parseExactJson(r.doc ?? 'null') as UpstreamDoc);
      if (rows.length < SCAN_CHUNK) return;
      after = rows[rows.length - 1]!.id;
    }
  }

  saveThemeSchema(tenant: TenantSlug, collection: CollectionSlug, schema: UpstreamDoc, now: string): Promise<void> {
    return this.tx('saveThemeSchema', (db) => themeSchemas.save(db, tenant, collection, schema, now));
  }

  getThemeSchema(tenant: TenantSlug, collection: CollectionSlug): Promise<UpstreamDoc | null> {
    return this.read('getThemeSchema', (db) => themeSchemas.get(db, tenant, collection));
  }

  recordRun(row: SyncRunRow): Promise<void> {
    return this.tx('recordRun', (db) => appendRun(db, row));
  }

  mirrorStatus(): Promise<MirrorStatus[]> {
    return this.read('mirrorStatus', (db) => mirrorStatus(db));
  }

  close(): Promise<void> {
    return this.closeEngine();
  }
}
