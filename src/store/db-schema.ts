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
  seen_run: string | null;
  mirrored_at: string;
}

export interface DocVariantsTable {
  collection: string;
  tenant: string;
  id: string;
  variant: string;
  updated_at: string | null;
  doc: string;
  deleted_at: string | null;
  seen_run: string | null;
  mirrored_at: string;
}

export interface SyncStateTable {
  tenant: string;
  collection: string;
  variant: string;
  cursor_updated_at: string | null;
  cursor_id: string | null;
  full_run_id: string | null;
  full_after_updated_at: string | null;
  full_after_id: string | null;
  /** 1 while an incremental run is in progress (its `after` may still be null). */
  incr_active: number;
  incr_after_updated_at: string | null;
  incr_after_id: string | null;
  last_success_at: string | null;
  last_error: string | null;
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
  theme_settings_schemas: ThemeSettingsSchemasTable;
};
