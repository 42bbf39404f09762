import type { CheckStore } from '../sync/self-check.js';
import type { ChangeKind, ChangeSource, DeleteReason } from '../sync/store-port.js';

/** One row of the change log (the `changes` table), as `understudy changes --json` prints it. */
export interface Change {
  /**
   * Grows with every change logged to this mirror, in the order the changes of one record were made; a reader of the
   * feed (`ChangeLog.read`) that has seen N has seen every change below N.
   */
  readonly seq: number;
  readonly tenant: string;
  /** The collection slug, as in the API path (`event-instances`). */
  readonly collection: string;
  readonly id: string;
  /** `published`, or the variant of a draft or locale copy (`draft`, `locale:fr`, …). */
  readonly variant: string;
  readonly kind: ChangeKind;
  /** The row's `updated_at` before the change (null for an insert). */
  readonly updated_at_before: string | null;
  /** The row's `updated_at` after it (a tombstone leaves it as it was). */
  readonly updated_at_after: string | null;
  /** Top-level field names whose values changed: every field for an insert, none for a delete. */
  readonly fields: readonly string[];
  readonly source: ChangeSource | null;
  /** The sync run (`sync_runs.run_id`) or write job behind the change. */
  readonly run_id: string | null;
  /** When the mirror committed it (the write's clock, ISO UTC). */
  readonly at: string;
  /**
   * Why a `delete` took the record out of the mirror: `deleted` (gone upstream, or deleted through a write) or
   * `unpublished` (left the published reads, exists upstream as a draft); null for every other kind.
   */
  readonly reason: DeleteReason | null;
}

/** Which changes to read: those after `since`, matching every filter given, in `seq` order, up to the feed's end. */
export interface ChangeFilter {
  /** Only changes with a greater `seq` (default 0: from the start). */
  readonly since?: number;
  /** Only changes with a `seq` at most this (an end read once, so one batch never grows while read). */
  readonly upTo?: number;
  readonly tenants?: readonly string[];
  readonly collections?: readonly string[];
  readonly kinds?: readonly string[];
  /**
   * Deletes only with one of these reasons. Changes of other kinds are selected by `kinds` alone; without `kinds`,
   * only deletes are (`reasons: ['unpublished']` is every unpublish).
   */
  readonly reasons?: readonly string[];
  /** At most this many (default: all). */
  readonly limit?: number;
}

/** Where one webhook endpoint stands (its secret is never stored). */
export interface EndpointState {
  readonly id: string;
  readonly tenant: string;
  readonly url: string;
  /** The last `seq` handed to it: delivered, or dead-lettered after its last attempt. */
  readonly deliveredSeq: number;
  readonly lastDeliveryAt: string | null;
  readonly lastError: string | null;
  readonly lastErrorAt: string | null;
  /** Set when the endpoint answered 410 Gone: nothing more is sent to it until it is enabled again. */
  readonly disabledAt: string | null;
  readonly disabledReason: string | null;
}

/**
 * The change log and the webhook endpoints' positions in it, in the mirror. Every method is one statement or one
 * transaction, but `settle`.
 *
 * The feed's end is where it has settled: every change at or below it has committed, and no transaction still
 * running can log one below it. On SQLite that is the last change committed (one writer at a time, in `seq` order);
 * on PostgreSQL, whose writers commit in parallel, a change that committed after a smaller seq still in flight
 * waits behind it (docs/changes.md).
 */
export interface ChangeLog {
  /** The changes `filter` selects, in `seq` order, up to the feed's end; never waits. */
  read(filter: ChangeFilter): Promise<Change[]>;
  /** The feed's end (0 when the log is empty). */
  lastSeq(): Promise<number>;
  /**
   * Waits until every change committed before the call has settled (the transactions then in flight have ended),
   * and returns the feed's end: a one-off read after it sees all of them. Returns at once on SQLite.
   */
  settle(opts?: { readonly signal?: AbortSignal }): Promise<number>;
  /** The smallest `seq` still kept (older ones were pruned); null when the log is empty. */
  firstSeq(): Promise<number | null>;
  /** Deletes the changes committed before `before` (ISO); returns how many. */
  prune(before: string): Promise<number>;
  /**
   * The state of endpoint `id`, created when first seen at the log's current end (an endpoint added to the config
   * receives the changes committed after the worker first sees it).
   */
  endpoint(id: string, tenant: string, url: string, now: string): Promise<EndpointState>;
  /** Every endpoint the mirror knows, configured or not any more. */
  endpoints(): Promise<EndpointState[]>;
  /** Moves an endpoint's position forward to `seq` (never back); `delivered` says whether it was received. */
  advanceEndpoint(id: string, seq: number, at: string, delivered: boolean): Promise<void>;
  /** Notes a failed delivery attempt (the latest only). */
  endpointFailed(id: string, error: string, at: string): Promise<void>;
  /** Disables an endpoint (a 410): the dispatcher sends it nothing more. */
  disableEndpoint(id: string, reason: string, at: string): Promise<void>;
  /** Enables a disabled endpoint again; false when no such endpoint exists. */
  enableEndpoint(id: string): Promise<boolean>;
}

/** What a read-only look at the change feed needs (`changes`, `status`): the log, the endpoints, the last checks. */
export type ChangeFeedReader = Pick<ChangeLog, 'read' | 'lastSeq' | 'settle' | 'firstSeq' | 'endpoints'> &
  Pick<CheckStore, 'lastChecks'>;
