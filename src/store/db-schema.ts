import type { Generated } from 'kysely';
import { type CollectionSlug, tableFor } from '../vocabulary/collections.js';

/**
 * The columns every collection table has. Typed columns (see `TYPED_COLUMNS`) come on top and are read with
 * plain SQL; Kysely only needs to know the shared ones.
 */
export interface CollectionTable {
  tenant: string;
  id: string;
  /** `updatedAt` normalised to UTC (`…Z` with ms), so it sorts as an instant. */
  updated_at: string | null;
  created_at: string | null;
  /** The record exactly as received, as JSON text. */
  doc: string;
  deleted_at: string | null;
  /** Why the row is tombstoned: `deleted` (gone upstream) or `unpublished` (a draft only upstream); NULL when live. */
  deleted_reason: string | null;
  seen_run: string | null;
  /** When the mirror last wrote the row (insert, update, revive, tombstone). */
  mirrored_at: string;
  /** What that write was: `insert`, `update`, `revive` or `delete`. */
  last_change: string | null;
  /** Who made that write (`sync` or `write`) and its run or job id: copied into `changes` by the triggers. */
  change_source: string | null;
  change_run: string | null;
}

export interface DocVariantsTable {
  collection: string;
  tenant: string;
  id: string;
  variant: string;
  updated_at: string | null;
  doc: string;
  deleted_at: string | null;
  /** Why the row is tombstoned: `deleted` (gone upstream) or `unpublished` (a draft only upstream); NULL when live. */
  deleted_reason: string | null;
  seen_run: string | null;
  /** When the mirror last wrote the row (insert, update, revive, tombstone). */
  mirrored_at: string;
  /** What that write was: `insert`, `update`, `revive` or `delete`. */
  last_change: string | null;
  /** Who made that write (`sync` or `write`) and its run or job id: copied into `changes` by the triggers. */
  change_source: string | null;
  change_run: string | null;
}

export interface SyncStateTable {
  tenant: string;
  collection: string;
  variant: string;
  cursor_updated_at: string | null;
  cursor_id: string | null;
  full_run_id: string | null;
  /** When the full pass in progress started: rows written since are never its to tombstone. */
  full_started_at: string | null;
  full_after_updated_at: string | null;
  full_after_id: string | null;
  /** 1 while an incremental run is in progress (its `after` may still be null). */
  incr_active: number;
  incr_after_updated_at: string | null;
  incr_after_id: string | null;
  last_success_at: string | null;
  last_error: string | null;
  /** When the last failure was recorded; null with no failure, or one recorded before the column existed. */
  last_error_at: string | null;
  /** The variant whose pass failed (`published`, `draft`, …); null when the failure was outside a variant's pass. */
  last_error_variant: string | null;
}

export interface SyncRunsTable {
  id: Generated<number>;
  run_id: string;
  tenant: string;
  collection: string;
  variant: string;
  mode: string;
  started_at: string;
  finished_at: string;
  status: string;
  fetched: number;
  inserted: number;
  updated: number;
  unchanged: number;
  deleted: number;
  requests: number;
  ms: number;
  error: string | null;
}

export interface ThemeSettingsSchemasTable {
  tenant: string;
  collection: string;
  doc: string;
  fetched_at: string;
}

/** One lease per tenant and collection (see `lease-table.ts`). */
export interface SyncLeasesTable {
  tenant: string;
  collection: string;
  holder: string;
  token: number;
  acquired_at: string;
  expires_at: string;
}

/** The change log: one row per insert, update, revive and tombstone of a record row (see docs/schema.md). */
export interface ChangesTable {
  seq: Generated<number>;
  tenant: string;
  collection: string;
  id: string;
  variant: string;
  kind: string;
  updated_at_before: string | null;
  updated_at_after: string | null;
  /** JSON array of top-level field names (text on SQLite, jsonb on PostgreSQL, read back as text). */
  fields: string;
  source: string | null;
  run_id: string | null;
  at: string;
  /** A delete's reason (`deleted` or `unpublished`, as the row's `deleted_reason`); NULL for every other kind. */
  reason: string | null;
  /**
   * PostgreSQL: the id of the transaction that wrote the change (`xid8`, as text), set by the column's default;
   * NULL on SQLite, for changes logged before migration 2026-11-28-070, and for changes copied from another mirror.
   */
  xid: Generated<string | null>;
  /**
   * PostgreSQL: how far the change sequence had gone before that transaction took its id (every seq up to it
   * belongs to an older transaction), where its writer noted it; else NULL.
   */
  seq_floor: Generated<number | string | null>;
}

/** Where each webhook endpoint stands (never its secret). */
export interface WebhookEndpointsTable {
  id: string;
  tenant: string;
  url: string;
  delivered_seq: number;
  last_delivery_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
  disabled_at: string | null;
  disabled_reason: string | null;
  created_at: string;
}

/** The last self-check of each tenant, collection and variant. */
export interface MirrorChecksTable {
  tenant: string;
  collection: string;
  variant: string;
  local: number;
  upstream: number;
  drift: number;
  checked_at: string;
  /** Records missing from the mirror, extra in it, and in another version: null for a counts-only check. */
  missing: number | null;
  extra: number | null;
  stale: number | null;
}

/** Which worker watches a tenant (config `watch`): a lease its holder renews. */
export interface WatchOwnersTable {
  tenant: string;
  holder: string;
  expires_at: string;
}

/** What `status` shows of the watch of each tenant and collection. */
export interface WatchStateTable {
  tenant: string;
  collection: string;
  holder: string;
  last_probe_at: string | null;
  last_change_at: string | null;
  interval_ms: number;
  probes: number;
  updated_at: string;
  /** When the last probe that succeeded was made (any holder's: newer wins). */
  last_fresh_at: string | null;
  /** The first probe that succeeded after the collection's last failure (compare with `sync_state.last_error_at`). */
  fresh_since: string | null;
}

export type CollectionTableName =
  | 'pages'
  | 'posts'
  | 'blogs'
  | 'seasons'
  | 'series'
  | 'events'
  | 'event_instances'
  | 'venues'
  | 'organizations'
  | 'media'
  | 'forms'
  | 'redirects'
  | 'custom_attributes';

export const collectionTable = (c: CollectionSlug): CollectionTableName => tableFor(c) as CollectionTableName;

export type Database = { [T in CollectionTableName]: CollectionTable } & {
  doc_variants: DocVariantsTable;
  sync_state: SyncStateTable;
  sync_runs: SyncRunsTable;
  sync_leases: SyncLeasesTable;
  theme_settings_schemas: ThemeSettingsSchemasTable;
  changes: ChangesTable;
  webhook_endpoints: WebhookEndpointsTable;
  mirror_checks: MirrorChecksTable;
  watch_owners: WatchOwnersTable;
  watch_state: WatchStateTable;
};
