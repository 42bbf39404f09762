import { randomUUID } from 'node:crypto';
import { describeError, UnderstudyError, UpstreamError } from '../errors.js';
import type { Logger } from '../log.js';
import { hasMore } from '../partners/list-envelope.js';
import type { CallOptions, ListQuery, PartnersClient, ReadQuery } from '../partners/partners-client.js';
import { type Position, PUBLISHED, type Store, type SyncKey, type SyncState, type Variant } from '../store/store.js';
import { COLLECTIONS, type CollectionSlug, THEME_SCHEMA_COLLECTIONS, VERSIONED } from '../vocabulary/collections.js';
import { type RecordId, recordId, type TenantSlug, type UpstreamDoc } from '../vocabulary/ids.js';
import type { ReadRoutes } from './discover-routes.js';
import { PageProgress } from './page-progress.js';
import {
  afterWhere,
  comparePositions,
  EPOCH,
  earlierOf,
  keyFieldFor,
  laterOf,
  positionOf,
  sinceWhere,
} from './position.js';
import { edgesTo, populatedDocs, refId, refValues } from './references.js';

export type SyncMode = 'full' | 'incremental';

export interface SyncDeps {
  readonly client: PartnersClient;
  readonly store: Store;
  readonly log: Logger;
  readonly now?: () => Date;
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
  /** Called after each committed page (progress display, metrics). */
  readonly onProgress?: (p: { collection: CollectionSlug; pages: number; fetched: number }) => void;
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
  deleted: number;
  /** Records dated later than the run's start plus `clockSkewMs`: mirrored, never moving the cursor. */
  future: number;
  /** Records whose `updatedAt` is null or not a date: mirrored (compared by JSON text), never stopping the run. */
  undated: number;
  requests: number;
  /** Answers 429 among `requests`: each paused the key before its retry. */
  rateLimited: number;
  ms: number;
  skipped?: string;
  error?: string;
  /** The error code behind `error`, for exit-code mapping; not part of the JSON contract. */
  errorCode?: string;
}

interface VariantSpec {
  readonly variant: Variant;
  readonly query: ReadQuery;
}

/** The copies of a collection a tenant mirrors: published always; drafts and extra locales when configured. */
export function variantsFor(target: TenantTarget, c: CollectionSlug): VariantSpec[] {
  const drafts = target.drafts === true && VERSIONED.has(c);
  const out: VariantSpec[] = [{ variant: PUBLISHED, query: {} }];
  if (drafts) out.push({ variant: 'draft', query: { draft: true } });
  for (const locale of target.locales ?? []) {
    out.push({ variant: `locale:${locale}`, query: { locale } });
    if (drafts) out.push({ variant: `draft+locale:${locale}`, query: { draft: true, locale } });
  }
  return out;
}

const DEFAULT_PAGE_SIZE = 1000;
/** How far ahead of the run's start an upstream `updatedAt` may be before it counts as future-dated. */
export const DEFAULT_CLOCK_SKEW_MS = 60_000;
const FUTURE_IDS_LOGGED = 10;

class Run {
  readonly report: CollectionReport;
  pages = 0;
  /** When the run started (ISO): no cursor it saves goes past it. */
  readonly startedAt: string;
  /** Records dated after this instant (ms) are future-dated: the run's start plus the clock-skew allowance. */
  readonly futureAfter: number;
  /** Ids of the first future-dated records seen, for the warning. */
  readonly futureIds: string[] = [];
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
    return {
      signal: this.signal,
      onAttempt: () => {
        this.report.requests++;
      },
      onRateLimited: () => {
        this.report.rateLimited++;
      },
    };
  }
  now(): string {
    return (this.deps.now?.() ?? new Date()).toISOString();
  }
  key(variant: Variant): SyncKey {
    return { tenant: this.tenant, collection: this.collection, variant };
  }
  counted(c: { inserted: number; updated: number; unchanged: number }, fetched: number): void {
    this.report.inserted += c.inserted;
    this.report.updated += c.updated;
    this.report.unchanged += c.unchanged;
    this.report.fetched += fetched;
    this.pages++;
    this.deps.onProgress?.({ collection: this.collection, pages: this.pages, fetched: this.report.fetched });
  }
  /** Throws between pages once a graceful stop was asked for: everything committed so far stays committed. */
  checkStop(): void {
    if (this.deps.stop?.aborted || this.signal.aborted) {
      throw new UnderstudyError('US_ABORTED', `sync of ${this.collection} stopped after ${this.pages} pages`);
    }
  }
  route(suffix = ''): string {
    return `/partners/{version}/{tenant}/${this.collection}${suffix}`;
  }
}

/**
 * Pages through a list route in (updatedAt, key) order, committing each page with its checkpoint. The cursor never
 * moves past the run's start, so a record dated in the future cannot hide the edits made before its date.
 */
async function syncListed(run: Run, spec: VariantSpec, mode: SyncMode): Promise<void> {
  const { store, log } = run.deps;
  const key = run.key(spec.variant);
  const keyField = keyFieldFor(run.collection);
  const limit = run.deps.pageSize ?? DEFAULT_PAGE_SIZE;
  const ceiling: Position = { updatedAt: run.startedAt, id: '' };
  let state = await store.getSyncState(key);
  // A cursor already past now (left by a record dated in the future) cannot say what was missed: read it all again.
  const broken = state.cursor !== null && Date.parse(state.cursor.updatedAt) > run.futureAfter;
  if (broken && mode === 'incremental' && !state.full)
    log.warn(
      { variant: spec.variant, cursor: state.cursor },
      'cursor is past now; this run reads the collection in full',
    );
  const full = mode === 'full' || state.cursor === null || state.full !== null || broken;
  let runId: string | null = null;
  let after: Position | null;
  let where: ListQuery['where'];
  const resumable = state.incremental?.after ?? null;
  if (full) {
    runId = state.full?.runId ?? randomUUID();
    after = state.full?.after ?? null;
    if (!state.full) {
      state = { ...state, full: { runId, after: null }, incremental: null };
      await store.saveSyncState(key, state);
    }
    where = after ? afterWhere(after, keyField) : undefined;
  } else if (resumable && state.cursor && comparePositions(resumable, ceiling) <= 0) {
    // An interrupted incremental run: go on right after its last committed page, without the overlap re-read
    // (that re-read would fetch every committed page of a burst of edits sharing one second again). Not from a
    // position past this run's start (a record dated in the future): edits made since would sort before it.
    after = resumable;
    where = afterWhere(after, keyField);
  } else {
    const cursor = state.cursor ?? EPOCH;
    after = (await overlapIsComplete(run, spec, key, cursor)) ? cursor : null;
    const overlap = run.deps.overlapMs ?? 1000;
    where = after
      ? afterWhere(after, keyField)
      : sinceWhere(new Date(Math.max(0, Date.parse(cursor.updatedAt) - overlap)).toISOString());
    state = { ...state, incremental: { after } };
  }
  log.debug({ collection: run.collection, variant: spec.variant, full, resumeFrom: after }, 'sync pass starting');
  const progress = new PageProgress(run.route(), keyField);
  // Page numbers only while the pass holds no position yet: records without a date (sorted first) carry none.
  let pageNo = 1;
  // A full pass from the start learns the collection's size from its first page; reading fewer records than that
  // means some may sort after every date (null last, as PostgreSQL orders), where keyset filters never reach.
  let total: number | null = null;
  let read = 0;
  for (;;) {
    run.checkStop();
    const q: ListQuery = {
      ...spec.query,
      collection: run.collection,
      limit,
      page: pageNo,
      sort: `updatedAt,${keyField}`,
      depth: 0,
      ...(where ? { where } : {}),
    };
    const page = await run.deps.client.listPage(q, run.opts);
    const docs = page.docs;
    if (full && !where && pageNo === 1) total = page.totalDocs;
    read += docs.length;
    const last = run.positionsOf(docs, keyField);
    progress.check(docs, after, last);
    const moved = last !== null;
    if (last) after = last;
    if (docs.length > 0) {
      state = full
        ? { ...state, full: { runId: runId as string, after } }
        : { ...state, cursor: laterOf(state.cursor, earlierOf(last, ceiling)), incremental: { after } };
      const counts = await store.applyPage(key, docs, state, runId ?? undefined);
      run.counted(counts, docs.length);
      log.debug({ collection: run.collection, variant: spec.variant, docs: docs.length, ...counts }, 'page committed');
    }
    if (docs.length === 0 || !hasMore(page, limit)) break;
    if (moved && after) {
      where = afterWhere(after, keyField);
      pageNo = 1;
    } else pageNo++;
  }
  if (full && runId && (total === null || read < total))
    state = await syncUndatedTail(run, spec, key, state, runId, keyField, limit);
  const reached = earlierOf(after, ceiling);
  const done: SyncState = {
    ...state,
    // A full pass read everything: its own position replaces the cursor (repairing one left past now).
    cursor: (full ? reached : laterOf(state.cursor, reached)) ?? EPOCH,
    full: null,
    incremental: null,
    lastSuccessAt: run.now(),
    lastError: null,
  };
  if (full && runId) {
    const keep = spec.variant === PUBLISHED ? await draftsOnly(run, key, runId, keyField) : [];
    run.report.deleted += await store.completeFull(key, runId, done, run.now(), keep);
  } else await store.saveSyncState(key, done);
}

/**
 * The records of a full pass without a valid `updatedAt` (null, or not a date), read from the other end of the
 * order: an upstream that sorts nulls last (PostgreSQL's ascending order) puts them after every date, where the
 * pass's keyset filters never reach, so they come first in descending order, by page number (they have no keyset
 * position) until a dated record shows up. Only asked when the pass read fewer records than the collection
 * holds, or resumed without knowing: an upstream that sorts them first (MongoDB) has given them already.
 */
async function syncUndatedTail(
  run: Run,
  spec: VariantSpec,
  key: SyncKey,
  state: SyncState,
  runId: string,
  keyField: string,
  limit: number,
): Promise<SyncState> {
  for (let pageNo = 1; pageNo <= MAX_TAIL_PAGES; pageNo++) {
    run.checkStop();
    const q: ListQuery = {
      ...spec.query,
      collection: run.collection,
      limit,
      page: pageNo,
      sort: `-updatedAt,${keyField}`,
      depth: 0,
    };
    const page = await run.deps.client.listPage(q, run.opts);
    const undated = page.docs.filter((d) => positionOf(d, keyField, run.route()) === null);
    if (undated.length > 0) {
      run.positionsOf(undated, keyField);
      run.counted(await run.deps.store.applyPage(key, undated, state, runId), undated.length);
    }
    if (undated.length < page.docs.length || page.docs.length === 0 || !hasMore(page, limit)) break;
  }
  return state;
}

/** Bounds the undated tail's page-number walk (a filter edits could shift: it stops rather than loop). */
const MAX_TAIL_PAGES = 1000;

const DRAFT_LOOKUP_BATCH = 100;

/**
 * Of the published rows a full sync did not see, those that still exist upstream as drafts: a Payload-style
 * upstream leaves a draft-only record out of published reads, and a record that is only a draft is not deleted.
 * One `draft=true` read per 100 ids, versioned collections only.
 */
async function draftsOnly(run: Run, key: SyncKey, runId: string, keyField: string): Promise<string[]> {
  if (!VERSIONED.has(run.collection)) return [];
  const unseen = await run.deps.store.unseenIds(key, runId);
  const found: string[] = [];
  for (let i = 0; i < unseen.length; i += DRAFT_LOOKUP_BATCH) {
    run.checkStop();
    const ids = unseen.slice(i, i + DRAFT_LOOKUP_BATCH);
    let docs: readonly UpstreamDoc[];
    try {
      const q: ListQuery = {
        collection: run.collection,
        where: { [keyField]: { in: ids } },
        draft: true,
        depth: 0,
        limit: ids.length,
      };
      docs = (await run.deps.client.listPage(q, run.opts)).docs;
    } catch (err) {
      // An upstream that refuses the lookup (e.g. no `in` operator) gets the deletions it got before.
      if (!(err instanceof UpstreamError) || err.code !== 'US_UPSTREAM') throw err;
      run.deps.log.warn({ collection: run.collection, err: describeError(err) }, 'draft lookup refused');
      break;
    }
    for (const doc of docs) {
      const id = doc[keyField];
      if (typeof id === 'string' || typeof id === 'number') found.push(String(id));
    }
  }
  if (found.length > 0) {
    run.deps.log.info(
      { collection: run.collection, drafts: found.length },
      'full sync: records not in published reads exist as drafts; not marked deleted',
    );
  }
  return found;
}

/** Above this many mirrored rows in the overlap window, counting them upstream first is cheaper than re-reading. */
const OVERLAP_COUNT_ROWS = 100;

/**
 * Whether the overlap window before the cursor (kept for late upstream commits) holds, upstream, exactly the rows
 * the mirror holds there, so an incremental run may start right after the cursor. Asked (one `limit=1` request)
 * only when the window holds more than `OVERLAP_COUNT_ROWS` mirrored rows: a burst of edits sharing one second
 * would otherwise be fetched again, page after page, by every next run. A smaller window is simply re-read.
 */
async function overlapIsComplete(run: Run, spec: VariantSpec, key: SyncKey, cursor: Position): Promise<boolean> {
  const to = Date.parse(cursor.updatedAt);
  if (cursor === EPOCH || Number.isNaN(to)) return false;
  const from = new Date(Math.max(0, to - (run.deps.overlapMs ?? 1000))).toISOString();
  const upTo = new Date(to).toISOString();
  const mirrored = await run.deps.store.countUpdatedBetween(key, from, upTo);
  if (mirrored <= OVERLAP_COUNT_ROWS) return false;
  const page = await run.deps.client.listPage(
    {
      ...spec.query,
      collection: run.collection,
      limit: 1,
      page: 1,
      sort: `updatedAt,${keyFieldFor(run.collection)}`,
      depth: 0,
      where: { and: [{ updatedAt: { greater_than_equal: from } }, { updatedAt: { less_than_equal: upTo } }] },
    },
    run.opts,
  );
  return page.totalDocs === mirrored;
}

/** Ids of `collection` that mirrored records of other collections point at. */
async function referencedIds(run: Run): Promise<Set<string>> {
  const ids = new Set<string>();
  for (const edge of edgesTo(run.collection)) {
    await run.deps.store.scanDocs({ tenant: run.tenant, collection: edge.from, variant: PUBLISHED }, (doc) => {
      for (const v of refValues(doc, edge)) {
        const id = refId(v);
        if (id !== null) ids.add(id);
      }
    });
  }
  return ids;
}

/** Fetches by id every record other collections reference (in incremental mode, only those not yet mirrored). */
async function syncByReference(run: Run, spec: VariantSpec, mode: SyncMode): Promise<void> {
  const { store, client } = run.deps;
  const key = run.key(spec.variant);
  const state = await store.getSyncState(key);
  const full = mode === 'full' || state.cursor === null;
  let ids = await referencedIds(run);
  if (!full) {
    const live = await store.liveIds(key);
    ids = new Set([...ids].filter((id) => !live.has(id)));
  }
  const runId = state.full?.runId ?? randomUUID();
  const running: SyncState = { ...state, full: full ? { runId, after: null } : null };
  for (const id of ids) {
    run.checkStop();
    let doc: UpstreamDoc;
    try {
      doc = await client.getById(run.collection, recordId(id) as RecordId, { ...spec.query, depth: 0 }, run.opts);
    } catch (err) {
      if (err instanceof UpstreamError && err.status === 404) continue; // referenced but gone: not mirrored
      throw err;
    }
    run.counted(await store.applyPage(key, [doc], running, full ? runId : undefined), 1);
  }
  const done: SyncState = {
    ...running,
    cursor: running.cursor ?? EPOCH,
    full: null,
    lastSuccessAt: run.now(),
    lastError: null,
  };
  if (full) run.report.deleted += await store.completeFull(key, runId, done, run.now());
  else await store.saveSyncState(key, done);
}

/**
 * Takes records populated inside a listable collection that references them (depth=1), for collections with
 * neither a list nor a get route. Incremental runs do this only while the mirror holds none of them yet:
 * an edit to an embedded record does not change its parent's updatedAt, so only a full run sees it.
 */
async function syncEmbedded(run: Run, spec: VariantSpec, mode: SyncMode, from: CollectionSlug): Promise<void> {
  const { store, client } = run.deps;
  const key = run.key(spec.variant);
  const state = await store.getSyncState(key);
  if (mode === 'incremental' && state.cursor !== null && (await store.liveIds(key)).size > 0) {
    await store.saveSyncState(key, { ...state, lastSuccessAt: run.now(), lastError: null });
    return;
  }
  const edges = edgesTo(run.collection).filter((e) => e.from === from);
  const fields = edges.map((e) => e.path[0] as string);
  const limit = run.deps.pageSize ?? DEFAULT_PAGE_SIZE;
  const keyField = keyFieldFor(from);
  const runId = randomUUID();
  const running: SyncState = { ...state, full: { runId, after: null } };
  // Only the embedding fields, populated one level, every joined record (`limit: 0`: Payload caps joins at 10).
  const select = Object.fromEntries(fields.map((f) => [f, true]));
  const joins = Object.fromEntries(fields.map((f) => [f, { limit: 0 }]));
  let after: Position | null = null;
  const progress = new PageProgress(`/partners/{version}/{tenant}/${from}`, keyField);
  for (;;) {
    run.checkStop();
    // Keyset paging over the parents, as for listed collections: parents created, edited or deleted mid-run
    // cannot shift the others across a page boundary.
    const page = await client.listPage(
      {
        ...spec.query,
        collection: from,
        limit,
        page: 1,
        sort: `updatedAt,${keyField}`,
        depth: 1,
        select: { ...select, updatedAt: true },
        joins,
        ...(after ? { where: afterWhere(after, keyField) } : {}),
      },
      run.opts,
    );
    const found = new Map<string, UpstreamDoc>();
    let last: Position | null = null;
    for (const doc of page.docs) {
      for (const edge of edges) for (const d of populatedDocs(doc, edge)) found.set(refId(d) as string, d);
      last = laterOf(last, positionOf(doc, keyField, run.route()));
    }
    progress.check(page.docs, after, last);
    after = laterOf(after, last);
    if (found.size > 0) run.counted(await store.applyPage(key, [...found.values()], running, runId), found.size);
    if (page.docs.length === 0 || !hasMore(page, limit)) break;
  }
  const done: SyncState = {
    ...running,
    cursor: state.cursor ?? EPOCH,
    full: null,
    lastSuccessAt: run.now(),
    lastError: null,
  };
  run.report.deleted += await store.completeFull(key, runId, done, run.now());
}

/** Mirrors a collection's theme-settings schema when the upstream serves one. */
async function syncThemeSchema(run: Run): Promise<void> {
  if (!THEME_SCHEMA_COLLECTIONS.includes(run.collection)) return;
  try {
    const schema = await run.deps.client.themeSettingsSchema(run.collection, run.opts);
    await run.deps.store.saveThemeSchema(run.tenant, run.collection, schema, run.now());
  } catch (err) {
    if (err instanceof UnderstudyError && (err.code === 'US_AUTH' || err.code === 'US_ABORTED')) throw err;
    run.deps.log.warn({ collection: run.collection, err: describeError(err) }, 'theme-settings schema not mirrored');
  }
}

/** How a collection can be reached, or why it cannot. */
export type Reach =
  | { readonly how: 'list' }
  | { readonly how: 'get' }
  | { readonly how: 'embedded'; readonly from: CollectionSlug }
  | { readonly how: 'none'; readonly reason: string };

export function reachOf(c: CollectionSlug, routes: ReadRoutes): Reach {
  return reachability(routes).get(c) ?? { how: 'none', reason: 'unknown collection' };
}

/**
 * How every collection is reached. Listed ones directly; one with a get route when a collection that is itself
 * reached references it (so ids can be found); one with no read route when a listed collection embeds it.
 */
export function reachability(routes: ReadRoutes): Map<CollectionSlug, Reach> {
  const reach = new Map<CollectionSlug, Reach>();
  for (const c of COLLECTIONS) if (routes.list.has(c)) reach.set(c, { how: 'list' });
  for (let grew = true; grew; ) {
    grew = false;
    for (const c of COLLECTIONS) {
      if (reach.has(c)) continue;
      const edges = edgesTo(c).filter((e) => e.from !== c);
      if (routes.get.has(c) && edges.some((e) => reach.has(e.from))) {
        reach.set(c, { how: 'get' });
        grew = true;
      } else {
        const from = edges.find((e) => routes.list.has(e.from));
        if (from) {
          reach.set(c, { how: 'embedded', from: from.from });
          grew = true;
        }
      }
    }
  }
  for (const c of COLLECTIONS) {
    if (reach.has(c)) continue;
    const reason = routes.get.has(c)
      ? 'no list route, and no reachable collection references its records'
      : 'no list or get route, and no listable collection embeds its records';
    reach.set(c, { how: 'none', reason });
  }
  return reach;
}

/**
 * Mirrors one collection of one tenant (every configured variant). Commits page by page, so an interrupted run
 * resumes where it stopped. Throws for a refused key or an abort; other failures land in the report's `error`.
 */
export async function syncCollection(
  deps: SyncDeps,
  target: TenantTarget,
  collection: CollectionSlug,
  mode: SyncMode,
  routes: ReadRoutes,
  signal: AbortSignal,
): Promise<CollectionReport> {
  const started = Date.now();
  const run = new Run(deps, target.slug, collection, signal);
  const log = deps.log.child({ tenant: target.slug, collection });
  const reach = reachOf(collection, routes);
  const startedAt = run.startedAt;
  let failure: unknown = null;
  if (reach.how === 'none') {
    run.report.skipped = reach.reason;
  } else {
    try {
      for (const spec of variantsFor(target, collection)) {
        if (reach.how === 'list') await syncListed(run, spec, mode);
        else if (reach.how === 'get') await syncByReference(run, spec, mode);
        else await syncEmbedded(run, spec, mode, reach.from);
      }
      await syncThemeSchema(run);
    } catch (err) {
      failure = err;
    }
  }
  run.report.ms = Date.now() - started;
  if (run.report.future > 0) {
    const futureAfter = new Date(run.futureAfter).toISOString();
    log.warn({ future: run.report.future, ids: run.futureIds, futureAfter }, 'records dated in the future');
  }
  // A graceful stop is not a failure: committed pages stay, the next run resumes, and status shows no error.
  const stopped = failure instanceof UnderstudyError && failure.code === 'US_ABORTED';
  const code = failure instanceof UnderstudyError ? failure.code : undefined;
  if (failure) {
    run.report.error = describeError(failure);
    if (code) run.report.errorCode = code;
  }
  if (failure && !stopped) {
    const key = run.key(PUBLISHED);
    const state = await deps.store.getSyncState(key);
    await deps.store.saveSyncState(key, { ...state, lastError: run.report.error ?? null });
  }
  await deps.store.recordRun({
    runId: deps.runId ?? randomUUID(),
    tenant: target.slug,
    collection,
    variant: variantsFor(target, collection)
      .map((v) => v.variant)
      .join(','),
    mode,
    startedAt,
    finishedAt: run.now(),
    status: stopped ? 'stopped' : failure ? 'failed' : reach.how === 'none' ? 'skipped' : 'ok',
    fetched: run.report.fetched,
    inserted: run.report.inserted,
    updated: run.report.updated,
    unchanged: run.report.unchanged,
    deleted: run.report.deleted,
    requests: run.report.requests,
    ms: run.report.ms,
    error: run.report.error ?? run.report.skipped ?? null,
  });
  const { errorCode: _omit, ...outcome } = run.report;
  if (stopped) log.info(outcome, 'sync stopped');
  else if (failure) log.error({ ...outcome, code }, 'sync failed');
  else log.info(outcome, reach.how === 'none' ? 'sync skipped' : 'sync finished');
  if (failure instanceof UnderstudyError && (failure.code === 'US_AUTH' || failure.code === 'US_ABORTED'))
    throw failure;
  return run.report;
}
