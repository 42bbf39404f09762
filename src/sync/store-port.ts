import type { CollectionSlug } from '../vocabulary/collections.js';
import type { TenantSlug, UpstreamDoc } from '../vocabulary/ids.js';

/**
 * Which copy of a record a row holds. `published` rows (default locale) live in the per-collection tables;
 * drafts and other locales live apart in `doc_variants`, keyed by this string
 * (`draft`, `locale:fr`, `locale:all`, `draft+locale:fr`).
 */
export type Variant = string;
export const PUBLISHED: Variant = 'published';

/** A position in the (updatedAt, id) order that sync reads in. */
export interface Position {
  readonly updatedAt: string;
  readonly id: string;
}

/** What sync remembers between runs for one tenant, collection and variant. */
export interface SyncState {
  /** Everything up to and including this position has been mirrored (the incremental high-water mark). */
  readonly cursor: Position | null;
  /**
   * A full pass in progress: its run id, when it started (ISO; rows written since are never its to tombstone) and
   * the last committed position; null when none is running.
   */
  readonly full: { readonly runId: string; readonly startedAt: string; readonly after: Position | null } | null;
  /** An incremental sync in progress: the last committed position of the run; null when none is running. */
  readonly incremental: { readonly after: Position | null } | null;
  readonly lastSuccessAt: string | null;
  readonly lastError: string | null;
  /** When the last failure was recorded (ISO); kept only while `lastError` is set. */
  readonly lastErrorAt: string | null;
  /**
   * The variant whose pass failed, null when the failure was outside a variant's pass (the theme-settings schema);
   * kept only while `lastError` is set. A watch probe clears a failure of the published variant (docs/watch.md).
   */
  readonly lastErrorVariant: Variant | null;
}

/** The state of a (tenant, collection, variant) that never synced. */
export const BLANK_SYNC_STATE: SyncState = {
  cursor: null,
  full: null,
  incremental: null,
  lastSuccessAt: null,
  lastError: null,
  lastErrorAt: null,
  lastErrorVariant: null,
};

export interface SyncKey {
  readonly tenant: TenantSlug;
  readonly collection: CollectionSlug;
  readonly variant: Variant;
}

/** What one record's write did to its row. */
export type ChangeKind = 'insert' | 'update' | 'revive' | 'delete';
/** Every kind of change, in the order the docs list them. */
export const CHANGE_KINDS: readonly ChangeKind[] = ['insert', 'update', 'delete', 'revive'];

/**
 * Why a row was tombstoned (`deleted_reason`, and the `reason` of its `delete` change): `deleted` when the record is
 * gone upstream (or was deleted through a write), `unpublished` when it left the published reads but exists upstream
 * as a draft.
 */
export type DeleteReason = 'deleted' | 'unpublished';
export const DELETE_REASONS: readonly DeleteReason[] = ['deleted', 'unpublished'];

/** A run's hold on one tenant and collection (every variant of it): see `Store.acquireLease`. */
export interface Lease {
  readonly tenant: TenantSlug;
  readonly collection: CollectionSlug;
  readonly holder: string;
  /** The fencing token: grows by one each time the lease changes hands; every fenced commit checks it. */
  readonly token: number;
  /** How long the lease lasts past each renewal (a fenced commit renews it too). */
  readonly ttlMs: number;
}

/**
 * One write to the rows of a key, applied in one transaction with everything it names. Newer wins, decided in SQL:
 * an upsert replaces a live row only when the record is strictly newer than it (by `updatedAt`; by content when
 * either side has no date), and a tombstoned row only when the record was fetched after the row was deleted.
 */
export interface WriteBatch {
  /** Records to upsert (a page, or a write-through's answer). */
  readonly upserts?: readonly UpstreamDoc[];
  /**
   * When the records were fetched (ISO; the request's start): a tombstone is undone only by a record fetched after
   * the row was deleted, however new. Default: now (the caller has just received them).
   */
  readonly fetchedAt?: string;
  /** A full pass's run id: every upserted record's row, changed or not, is marked seen by it. */
  readonly seenBy?: string;
  /** Ids to tombstone (a write-through DELETE; an update the upstream answered by unpublishing the record). */
  readonly deletes?: readonly string[];
  /** Why `deletes` are tombstoned; default `deleted`. */
  readonly deleteReason?: DeleteReason;
  /**
   * The end of a full pass: tombstone the live rows it did not see and that were last written before it started,
   * those in `unpublished` (records that exist upstream as drafts only) as `unpublished`, the others as `deleted`.
   */
  readonly tombstoneUnseen?: {
    readonly runId: string;
    readonly startedAt: string;
    readonly unpublished: readonly string[];
  };
  /** The sync state to save with the rows. */
  readonly next?: SyncState;
  /** The lease the writer holds: the commit is refused (`US_LEASE_LOST`, nothing written) unless it still holds. */
  readonly fence?: Lease;
  /** The write's clock (ISO), for `mirrored_at` and `deleted_at`. Default: now. */
  readonly now?: string;
  /** Who writes, for the change log (`changes.source`): a sync page or pass, or a write-through. Default `sync`. */
  readonly source?: ChangeSource;
  /** The sync run or write job behind the write, for the change log (`changes.run_id`). */
  readonly runId?: string;
}

/** Where a change to the mirror came from: a sync (page, pass end) or a write-through of a write job. */
export type ChangeSource = 'sync' | 'write';

/** What a write changed: one entry per row it inserted, updated, revived or tombstoned, and the counts. */
export interface WriteResult {
  readonly changes: readonly { readonly id: string; readonly kind: ChangeKind }[];
  readonly inserted: number;
  readonly updated: number;
  readonly revived: number;
  readonly deleted: number;
  /** Upserted records that did not win (not newer than the row). */
  readonly unchanged: number;
}

export interface SyncRunRow {
  readonly runId: string;
  readonly tenant: TenantSlug;
  readonly collection: CollectionSlug;
  readonly variant: Variant;
  readonly mode: 'full' | 'incremental';
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly status: 'ok' | 'failed' | 'skipped' | 'stopped';
  readonly fetched: number;
  readonly inserted: number;
  readonly updated: number;
  readonly unchanged: number;
  readonly deleted: number;
  readonly requests: number;
  readonly ms: number;
  readonly error: string | null;
}

/** Per tenant and collection: what `status` reports about the mirror. */
export interface MirrorStatus {
  readonly tenant: string;
  readonly collection: CollectionSlug;
  readonly live: number;
  readonly deleted: number;
  readonly lastSuccessAt: string | null;
  readonly lastError: string | null;
  /** When the last failure was recorded; null when none, or when it was recorded before failures had a time. */
  readonly lastErrorAt: string | null;
  /**
   * When a watch probe first found the collection as fresh as the upstream after its last failure (one of the
   * published variant's pass, which watch covers); null otherwise. Decided in SQL: the later instant wins.
   */
  readonly freshSince: string | null;
  /** The watch of it (config `watch`), as the watching worker last wrote it; null when it was never watched. */
  readonly watch: MirrorWatch | null;
}

/** What `status` shows of a collection's watch (`watch_state`). */
export interface MirrorWatch {
  readonly holder: string;
  readonly lastProbeAt: string | null;
  readonly lastChangeAt: string | null;
  /** When the last probe that succeeded was made (by any holder). */
  readonly lastFreshAt: string | null;
  readonly intervalMs: number;
  readonly probes: number;
  /** When the watching worker last wrote it (every few seconds while it watches). */
  readonly updatedAt: string;
}

/**
 * The mirror, as sync and writes see it. Every method is one transaction; a failure rolls it back whole. Rows are
 * never hard-deleted: a record gone upstream (or unpublished) gets `deleted_at` and its `DeleteReason`, and one
 * that comes back is revived.
 */
export interface Store {
  /** Reads the sync state of a key, or a blank state when it has never synced. */
  getSyncState(key: SyncKey): Promise<SyncState>;
  /** The one write operation: applies `batch` to the rows of `key` (and saves its state) in one transaction. */
  write(key: SyncKey, batch: WriteBatch): Promise<WriteResult>;
  /**
   * Takes the lease on a tenant and collection for `holder` when it is free, expired, already `holder`'s, or held
   * by `takeOverFrom` (a holder known to be dead); null when another live holder has it. It lasts `ttlMs` from now
   * unless renewed.
   */
  acquireLease(
    tenant: TenantSlug,
    collection: CollectionSlug,
    holder: string,
    ttlMs: number,
    opts?: { readonly takeOverFrom?: string },
  ): Promise<Lease | null>;
  /** Who holds the lease on a tenant and collection and until when (ISO), or null when no live run holds it. */
  leaseHolder(tenant: TenantSlug, collection: CollectionSlug): Promise<{ holder: string; expiresAt: string } | null>;
  /** Extends a held lease by its `ttlMs` from now; false when it has changed hands (the holder is fenced off). */
  renewLease(lease: Lease): Promise<boolean>;
  /** Gives a lease up (a no-op when it has changed hands). */
  releaseLease(lease: Lease): Promise<void>;
  /** Ids of live rows a full sync `runId` has not seen (so far) among those written before `startedAt`. */
  unseenIds(key: SyncKey, runId: string, startedAt: string): Promise<string[]>;
  /** How many live rows of a key have `updated_at` between `from` and `to` (ISO instants, both included). */
  countUpdatedBetween(key: SyncKey, from: string, to: string): Promise<number>;
  /** The versions (id and `updated_at`) of live rows with `updated_at` between `from` and `to` (both included), in id order. */
  versionsUpdatedBetween(key: SyncKey, from: string, to: string): Promise<Position[]>;
  /** Ids of live rows of a collection (for following references). */
  liveIds(key: SyncKey): Promise<Set<string>>;
  /** Calls `fn` with each live row's doc (parsed JSON), streaming rather than loading the table at once. */
  scanDocs(key: SyncKey, fn: (doc: UpstreamDoc) => void): Promise<void>;
  /** Stores a theme-settings schema document. */
  saveThemeSchema(tenant: TenantSlug, collection: CollectionSlug, schema: UpstreamDoc, now: string): Promise<void>;
  /** Reads a stored theme-settings schema, or null. */
  getThemeSchema(tenant: TenantSlug, collection: CollectionSlug): Promise<UpstreamDoc | null>;
  /** Appends one row to `sync_runs`. */
  recordRun(row: SyncRunRow): Promise<void>;
  /** Live and deleted counts, last success and last error for every tenant and collection in the mirror. */
  mirrorStatus(): Promise<MirrorStatus[]>;
  /** Closes the database. Idempotent. */
  close(): Promise<void>;
}
