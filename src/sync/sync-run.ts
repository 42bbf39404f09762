import { randomUUID } from 'node:crypto';
import { UnderstudyError } from '../errors.js';
import type { Logger } from '../log.js';
import type { CallOptions, ListPage, ListQuery, PartnersClient, ReadQuery } from '../partners/partners-client.js';
import { type Clock, systemClock } from '../vocabulary/clock.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import type { TenantSlug, UpstreamDoc } from '../vocabulary/ids.js';
import { EPOCH, laterOf, positionOf } from './position.js';
import type { Lease, Position, Store, SyncKey, SyncState, Variant, WriteBatch, WriteResult } from './store-port.js';

export type SyncMode = 'full' | 'incremental';

export interface SyncDeps {
  readonly client: PartnersClient;
  readonly store: Store;
  readonly log: Logger;
  /** Where the run reads the time: its timestamps, and how long it waits for a held lease. Default the real clock. */
  readonly clock?: Clock;
  /** Page size asked for; the upstream may clamp it, and sync follows what it reports. Default 1000. */
  readonly pageSize?: number;
  /** How far before the cursor an incremental run starts re-reading, for late-committed upstream writes. Default 1000. */
  readonly overlapMs?: number;
  /**
   * How far ahead of the run's start an upstream `updatedAt` may be before the record counts as future-dated
   * (counted, logged). The cursor itself never moves past the run's start. Default 60000.
   */
  readonly clockSkewMs?: number;
  /** Aborted when the process should stop gracefully: the page in flight is committed, then sync stops. */
  readonly stop?: AbortSignal;
  /** Shared by every collection of one run in `sync_runs.run_id`; a fresh id per collection when absent. */
  readonly runId?: string;
  /**
   * How long `sync` waits for a collection another run holds before reporting it skipped ("locked by another
   * run"). Default 0: skip at once.
   */
  readonly waitMs?: number;
  /** How long a run's lease on a collection lasts without renewal (a crashed holder's expires after it). Default 30 s. */
  readonly leaseTtlMs?: number;
  /**
   * Called after each committed page (progress display, metrics); `total`, when the upstream said it, is how many
   * records this pass expects in all (`totalDocs` of what is left, plus what was read before).
   */
  readonly onProgress?: (p: { collection: CollectionSlug; pages: number; fetched: number; total?: number }) => void;
  /**
   * Told after an incremental page commits, with how long each record it inserted, updated or revived took from
   * its upstream `updatedAt` to that commit (ms): the freshness of the mirror (`understudy_freshness_seconds`).
   */
  readonly onFresh?: (p: { collection: CollectionSlug; lagsMs: readonly number[] }) => void;
  /** Told when a request of this run waits at its key's rate gate (`since`), and when it is let through (`null`). */
  readonly onWaiting?: (p: { collection: CollectionSlug; kind: 'read' | 'write'; since: number | null }) => void;
}

export interface TenantTarget {
  readonly slug: TenantSlug;
  readonly collections?: readonly CollectionSlug[];
  readonly drafts?: boolean;
  readonly locales?: readonly string[];
}

export interface CollectionReport {
  name: CollectionSlug;
  fetched: number;
  inserted: number;
  updated: number;
  unchanged: number;
  /** Rows taken out of the mirror: records gone upstream, and records unpublished (`unpublished` of them). */
  deleted: number;
  /** Of `deleted`, records that left the published reads but exist upstream as drafts; present only when some did. */
  unpublished?: number;
  /** Records dated later than the run's start plus `clockSkewMs`: mirrored, never moving the cursor. */
  future: number;
  /** Records whose `updatedAt` is null or not a date: mirrored (compared by JSON text), never stopping the run. */
  undated: number;
  requests: number;
  /** Answers 429 among `requests`: each paused the key before its retry. */
  rateLimited: number;
  ms: number;
  skipped?: string;
  /** Who held the collection when the run skipped it as locked, and until when their lease runs (ISO). */
  heldBy?: { readonly holder: string; readonly until: string };
  error?: string;
  /** The error code behind `error`, for exit-code mapping; not part of the JSON contract. */
  errorCode?: string;
}

export const DEFAULT_PAGE_SIZE = 1000;
/** How far ahead of the run's start an upstream `updatedAt` may be before it counts as future-dated. */
export const DEFAULT_CLOCK_SKEW_MS = 60_000;
const FUTURE_IDS_LOGGED = 10;

/** One collection's sync of one tenant: its deps, report and clock, shared by every pass over its variants. */
export class Run {
  readonly report: CollectionReport;
  pages = 0;
  /** When the run started (ISO): no cursor it saves goes past it. */
  readonly startedAt: string;
  /** Records dated after this instant (ms) are future-dated: the run's start plus the clock-skew allowance. */
  readonly futureAfter: number;
  /** Ids of the first future-dated records seen, for the warning. */
  readonly futureIds: string[] = [];
  /** The lease this run holds on its collection: every commit is fenced by it. */
  lease: Lease | null = null;
  /**
   * The variant whose pass runs (the search after a watched pass counts as the published one's); null outside the
   * variants' passes. A failure is recorded with it: a watch probe clears only a failure of the published variant.
   */
  passing: Variant | null = null;
  /** This run's id (`sync_runs.run_id`, `changes.run_id`): the deps' when shared by a whole run, else its own. */
  readonly runId: string;
  constructor(
    readonly deps: SyncDeps,
    readonly tenant: TenantSlug,
    readonly collection: CollectionSlug,
    readonly signal: AbortSignal,
  ) {
    this.report = {
      name: collection,
      fetched: 0,
      inserted: 0,
      updated: 0,
      unchanged: 0,
      deleted: 0,
      future: 0,
      undated: 0,
      requests: 0,
      rateLimited: 0,
      ms: 0,
    };
    this.startedAt = this.now();
    this.runId = deps.runId ?? randomUUID();
    this.futureAfter = Date.parse(this.startedAt) + (deps.clockSkewMs ?? DEFAULT_CLOCK_SKEW_MS);
  }
  /** The last position of a page, counting its undated and future-dated records on the way. */
  positionsOf(docs: readonly UpstreamDoc[], keyField: string): Position | null {
    let last: Position | null = null;
    for (const doc of docs) {
      const p = positionOf(doc, keyField, this.route());
      if (p === null) this.report.undated++;
      else if (Date.parse(p.updatedAt) > this.futureAfter) {
        this.report.future++;
        if (this.futureIds.length < FUTURE_IDS_LOGGED) this.futureIds.push(p.id);
      }
      last = laterOf(last, p);
    }
    return last;
  }
  get opts(): CallOptions {
    const { onWaiting } = this.deps;
    return {
      signal: this.signal,
      ...(onWaiting ? { onWaiting: (kind, since) => onWaiting({ collection: this.collection, kind, since }) } : {}),
      onAttempt: () => {
        this.report.requests++;
      },
      onRateLimited: () => {
        this.report.rateLimited++;
      },
    };
  }
  /** The run's clock: the deps' or the real one. */
  get clock(): Clock {
    return this.deps.clock ?? systemClock;
  }
  now(): string {
    return new Date(this.clock.now()).toISOString();
  }
  key(variant: Variant): SyncKey {
    return { tenant: this.tenant, collection: this.collection, variant };
  }
  /**
   * Writes `batch` to the rows of `key`, fenced by this run's lease (nothing is committed once it is lost), its
   * changes logged as this run's.
   */
  commit(key: SyncKey, batch: WriteBatch): Promise<WriteResult> {
    const logged: WriteBatch = { ...batch, source: 'sync', runId: this.runId };
    return this.deps.store.write(key, this.lease ? { ...logged, fence: this.lease } : logged);
  }
  /** Saves a sync state alone (a pass starting, or finishing without a page), fenced like every commit. */
  async saveState(key: SyncKey, next: SyncState): Promise<void> {
    await this.commit(key, { next });
  }
  /** Counts a committed page of `fetched` records. Revived rows count as updated. */
  counted(c: WriteResult, fetched: number, total?: number): void {
    this.report.inserted += c.inserted;
    this.report.updated += c.updated + c.revived;
    this.report.unchanged += c.unchanged;
    this.report.fetched += fetched;
    this.pages++;
    this.deps.onProgress?.({
      collection: this.collection,
      pages: this.pages,
      fetched: this.report.fetched,
      ...(total === undefined ? {} : { total }),
    });
  }
  /** Whether a graceful stop was asked for (or the run cancelled). */
  stopRequested(): boolean {
    return this.deps.stop?.aborted === true || this.signal.aborted;
  }
  /** Throws between pages once a graceful stop was asked for: everything committed so far stays committed. */
  checkStop(): void {
    if (this.stopRequested()) {
      throw new UnderstudyError('US_ABORTED', `sync of ${this.collection} stopped after ${this.pages} pages`);
    }
  }
  /**
   * Reads one page of this collection at depth 0: the copy `query` selects, `limit` records, `sort`ed. `signal`
   * also cancels it (a page fetched ahead that is no longer wanted).
   */
  listPage(
    query: ReadQuery,
    page: number,
    limit: number,
    sort: string,
    where?: ListQuery['where'],
    signal?: AbortSignal,
  ): Promise<ListPage> {
    const q: ListQuery = {
      ...query,
      collection: this.collection,
      limit,
      page,
      sort,
      depth: 0,
      ...(where ? { where } : {}),
    };
    const opts = this.opts;
    return this.deps.client.listPage(q, signal ? { ...opts, signal: AbortSignal.any([opts.signal, signal]) } : opts);
  }
  route(suffix = ''): string {
    return `/partners/{version}/{tenant}/${this.collection}${suffix}`;
  }
}

/**
 * The one last step of every pass: the state it leaves (`cursor`, no run in progress, a success), saved with the
 * tombstones of a full pass (live rows its run did not see and that were not written since it started: those
 * `unpublished` finds as unpublished, the rest as deleted) or alone.
 */
export async function finishPass(
  run: Run,
  key: SyncKey,
  state: SyncState,
  cursor: Position | null,
  full: {
    readonly runId: string;
    readonly startedAt: string;
    readonly unpublished?: () => Promise<readonly string[]>;
  } | null,
): Promise<void> {
  const done: SyncState = { ...state, cursor: cursor ?? EPOCH, full: null, lastSuccessAt: run.now(), lastError: null };
  if (!full) return run.saveState(key, done);
  const unpublished = (await full.unpublished?.()) ?? [];
  const r = await run.commit(key, {
    next: done,
    tombstoneUnseen: { runId: full.runId, startedAt: full.startedAt, unpublished },
  });
  run.report.deleted += r.deleted;
  const drafts = new Set(unpublished);
  const taken = r.changes.filter((c) => c.kind === 'delete' && drafts.has(c.id)).length;
  if (taken > 0) run.report.unpublished = (run.report.unpublished ?? 0) + taken;
}
