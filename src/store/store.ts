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
  /** A full sync in progress: its run id and the last committed position; null when none is running. */
  readonly full: { readonly runId: string; readonly after: Position | null } | null;
  /** An incremental sync in progress: the last committed position of the run; null when none is running. */
  readonly incremental: { readonly after: Position | null } | null;
  readonly lastSuccessAt: string | null;
  readonly lastError: string | null;
}

export interface SyncKey {
  readonly tenant: TenantSlug;
  readonly collection: CollectionSlug;
  readonly variant: Variant;
}

export interface UpsertCounts {
  inserted: number;
  updated: number;
  unchanged: number;
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
}

/**
 * The mirror. Every method is one transaction; a failure rolls it back whole. Rows are never hard-deleted:
 * a record gone upstream gets `deleted_at`, and one that comes back is revived.
 */
export interface Store {
  /** Reads the sync state of a key, or a blank state when it has never synced. */
  getSyncState(key: SyncKey): Promise<SyncState>;
  /**
   * Upserts one page of records and saves the next sync state in one transaction. A row is written only when
   * the incoming `updatedAt` is newer (or the row is deleted); `seenRunId` marks rows seen by a full sync.
   */
  applyPage(key: SyncKey, docs: readonly UpstreamDoc[], next: SyncState, seenRunId?: string): Promise<UpsertCounts>;
  /** Saves a sync state alone (a run starting, failing or finishing without a page). */
  saveSyncState(key: SyncKey, next: SyncState): Promise<void>;
  /**
   * Ends a full sync: marks rows not seen by `runId` deleted, except the ids in `keep`, saves `next`; returns how
   * many were marked.
   */
  completeFull(key: SyncKey, runId: string, next: SyncState, now: string, keep?: readonly string[]): Promise<number>;
  /** Ids of live rows a full sync `runId` has not seen (so far): what `completeFull` would mark deleted. */
  unseenIds(key: SyncKey, runId: string): Promise<string[]>;
  /** Upserts records outside a sync (write-through); same newer-wins rule. */
  upsertDocs(key: SyncKey, docs: readonly UpstreamDoc[]): Promise<UpsertCounts>;
  /** Marks one record deleted (write-through of a DELETE); returns whether a live row was marked. */
  markDeleted(key: SyncKey, id: string, now: string): Promise<boolean>;
  /** How many live rows of a key have `updated_at` between `from` and `to` (ISO instants, both included). */
  countUpdatedBetween(key: SyncKey, from: string, to: string): Promise<number>;
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
