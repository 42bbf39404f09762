import { setImmediate as turn } from 'node:timers/promises';
import { hasMore } from '../partners/list-envelope.js';
import type { ListPage, ListQuery } from '../partners/partners-client.js';
import type { UpstreamDoc } from '../vocabulary/ids.js';
import { docKey } from '../vocabulary/record-key.js';
import { draftsOnly } from './drafts-only.js';
import { type FullPass, type PassPlan, planPass } from './list-pass-plan.js';
import { PageProgress } from './page-progress.js';
import { afterWhere, earlierOf, isDated, keyFieldFor, laterOf, positionOf } from './position.js';
import { type Position, PUBLISHED, type SyncKey, type SyncState, type WriteResult } from './store-port.js';
import { DEFAULT_PAGE_SIZE, finishPass, type Run, type SyncMode } from './sync-run.js';
import { syncUndatedTail } from './undated-tail.js';
import type { VariantSpec } from './variants.js';

/** How long a graceful stop waits for the page fetched ahead (waiting on the rate budget, it is cancelled). */
const STOP_GRACE_MS = 2000;

/** Whether `p` settles successfully within `ms`. */
const landsWithin = (p: Promise<unknown>, ms: number): Promise<boolean> => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  return Promise.race([
    p.then(
      () => true,
      () => false,
    ),
    late,
  ]).finally(() => clearTimeout(timer));
};

/** A page asked for, and when it was asked (a tombstone set after that is not undone by it). */
interface Fetched {
  readonly page: ListPage;
  readonly fetchedAt: string;
}

/** One pass over a list route as it goes from page to page. */
interface Paging {
  readonly run: Run;
  readonly spec: VariantSpec;
  readonly key: SyncKey;
  readonly keyField: string;
  readonly limit: number;
  /** The run's start: no cursor saved goes past it. */
  readonly ceiling: Position;
  readonly full: boolean;
  readonly pass: FullPass | null;
  readonly progress: PageProgress;
  /** What the run had read before this pass (progress totals). */
  readonly base: number;
  state: SyncState;
  after: Position | null;
  where: ListQuery['where'];
  /** Page numbers only while the pass holds no position yet: records without a date (sorted first) carry none. */
  pageNo: number;
  /**
   * Records without a date carry no keyset position: an upstream that sorts them last (PostgreSQL's nulls last)
   * puts them after every date, where keyset filters never reach. A pass from the start has read them only when
   * its first page held the whole collection, or began with them (the upstream sorts them first); else the undated
   * tail goes back for them. (Comparing the records read with the first page's totalDocs cannot tell: records
   * created during the pass make up for undated ones never read.)
   */
  readThemAll: boolean;
  read: number;
  /** What was read before the current `where`: its pages' totalDocs counts only what is left (progress totals). */
  readBefore: number;
}

/** What a page says about the pass: its last position, whether more follow, and how many records to expect. */
interface PageStep {
  readonly last: Position | null;
  readonly more: boolean;
  readonly expected: number;
}

/** Moves the pass past a page it read (positions, stuck-page check), choosing the next page's filter or number. */
function stepPast(p: Paging, page: ListPage): PageStep {
  const { run, keyField, limit } = p;
  const docs = page.docs;
  if (p.full && !p.where && p.pageNo === 1) {
    const first = docs[0];
    p.readThemAll = !hasMore(page, limit) || (first !== undefined && positionOf(first, keyField, run.route()) === null);
  }
  const expected = p.readBefore + page.totalDocs;
  p.read += docs.length;
  const last = run.positionsOf(docs, keyField);
  p.progress.check(docs, p.after, last);
  const moved = last !== null;
  if (last) p.after = last;
  const more = docs.length > 0 && hasMore(page, limit);
  if (more) {
    if (moved && p.after) {
      p.where = afterWhere(p.after, keyField);
      p.pageNo = 1;
      p.readBefore = p.base + p.read;
    } else p.pageNo++;
  }
  return { last, more, expected };
}

/** How long each record the page inserted, updated or revived took from its upstream `updatedAt` to the commit. */
function reportFreshness(p: Paging, docs: readonly UpstreamDoc[], changes: WriteResult['changes']): void {
  const { run } = p;
  const committed = run.clock.now();
  const stamps = new Map<string, number>();
  for (const d of docs) {
    const id = docKey(run.collection, d);
    if (id !== null && isDated(d)) stamps.set(id, Date.parse(d.updatedAt as string));
  }
  const lagsMs: number[] = [];
  for (const c of changes) {
    const at = c.kind === 'delete' ? undefined : stamps.get(c.id);
    if (at !== undefined) lagsMs.push(Math.max(0, committed - at));
  }
  if (lagsMs.length > 0) run.deps.onFresh?.({ collection: run.collection, lagsMs });
}

/** Commits a page with the state it leaves: a full pass's position, or the incremental cursor (never past now). */
async function commitPage(p: Paging, { page, fetchedAt }: Fetched, step: PageStep): Promise<void> {
  const { run, pass, key } = p;
  const docs = page.docs;
  p.state = pass
    ? { ...p.state, full: { ...pass, after: p.after } }
    : {
        ...p.state,
        cursor: laterOf(p.state.cursor, earlierOf(step.last, p.ceiling)),
        incremental: { after: p.after },
      };
  const counts = await run.commit(key, {
    upserts: docs,
    fetchedAt,
    next: p.state,
    ...(pass ? { seenBy: pass.runId } : {}),
  });
  run.counted(counts, docs.length, step.expected);
  if (!p.full && run.deps.onFresh && counts.changes.length > 0) reportFreshness(p, docs, counts.changes);
  run.deps.log.debug(
    { collection: run.collection, variant: p.spec.variant, docs: docs.length, changed: counts.changes.length },
    'page committed',
  );
}

/**
 * Reads the pass's pages in order, committing each; the next page is fetched while the previous one commits (one
 * page ahead at most, cancelled when the pass stops before using it). Each page is awaited and committed inside
 * {@link takePage}, whose frame ends with it: this loop holds only the promise of the page ahead, so a committed page
 * is garbage before the next one is parsed (never two parsed pages alive at once).
 */
async function readPages(p: Paging): Promise<void> {
  const { run, spec, limit } = p;
  const sort = `updatedAt,${p.keyField}`;
  const ahead = new AbortController();
  const fetchPage: FetchPage = (pageNo, w) => {
    const fetchedAt = run.now();
    const fetched = run
      .listPage(spec.query, pageNo, limit, sort, w, ahead.signal)
      .then((page) => ({ page, fetchedAt }));
    // Awaited once the page before it has committed: a failure meanwhile (the commit yields, as PostgreSQL's do)
    // must not be an unhandled rejection. The await below still sees it, and fails this collection alone.
    fetched.catch(() => undefined);
    return fetched;
  };
  run.checkStop();
  const cursor: Ahead = { pending: fetchPage(p.pageNo, p.where) };
  try {
    while (cursor.pending) await takePage(p, cursor, fetchPage);
  } finally {
    if (cursor.pending) ahead.abort(); // no longer wanted: its failure is nobody's (handled in fetchPage)
  }
}

type FetchPage = (pageNo: number, w: ListQuery['where']) => Promise<Fetched>;

/** The page asked for and not yet committed: null once the pass has read its last page. */
interface Ahead {
  pending: Promise<Fetched> | null;
}

/** Awaits the page in `cursor`, asks for the next one (kept in `cursor`) and commits this one. */
async function takePage(p: Paging, cursor: Ahead, fetchPage: FetchPage): Promise<void> {
  const { run } = p;
  const fetched = await (cursor.pending as Promise<Fetched>);
  cursor.pending = null;
  const step = stepPast(p, fetched.page);
  // Fetch the next page while this one commits, unless a stop was asked for (this page still commits).
  if (step.more && !run.stopRequested()) {
    cursor.pending = fetchPage(p.pageNo, p.where);
    // Two turns of the event loop, so the request is on the wire before a commit holds the thread (SQLite's is
    // synchronous): the upstream then builds the next page while this one commits, instead of after it. The
    // first lets the request pass the client's layers; undici then writes it from an immediate of its own,
    // which the second waits for (test/sync/page-ahead-on-wire.test.ts fails on one turn).
    await turn();
    await turn();
  }
  if (fetched.page.docs.length > 0) await commitPage(p, fetched, step);
  if (step.more && run.stopRequested()) {
    // A graceful stop: the page fetched ahead is committed too when its answer lands within STOP_GRACE_MS
    // (a request answered and thrown away would be spent again by the next run); else it is cancelled.
    if (!cursor.pending || !(await landsWithin(cursor.pending, STOP_GRACE_MS))) run.checkStop();
  }
}

/** The end of a pass: the undated tail when needed, then the cursor it reached and a full pass's tombstones. */
async function endPass(p: Paging): Promise<void> {
  const { run, spec, key, keyField, pass } = p;
  let state = p.state;
  if (pass && !p.readThemAll) state = await syncUndatedTail(run, spec, key, state, pass.runId, keyField, p.limit);
  const reached = earlierOf(p.after, p.ceiling);
  // A full pass read everything: its own position replaces the cursor (repairing one left past now).
  const cursor = p.full ? reached : laterOf(state.cursor, reached);
  const finalState: SyncState = { ...state, incremental: null };
  if (!pass) return finishPass(run, key, finalState, cursor, null);
  const { runId, startedAt } = pass;
  const unpublished = async () => (spec.variant === PUBLISHED ? draftsOnly(run, key, runId, startedAt, keyField) : []);
  await finishPass(run, key, finalState, cursor, { runId, startedAt, unpublished });
}

/** The state of a pass about to read its first page. */
function startPaging(run: Run, spec: VariantSpec, key: SyncKey, keyField: string, ceiling: Position, plan: PassPlan) {
  const base = run.report.fetched;
  return {
    run,
    spec,
    key,
    keyField,
    limit: run.deps.pageSize ?? DEFAULT_PAGE_SIZE,
    ceiling,
    full: plan.full,
    pass: plan.pass,
    progress: new PageProgress(run.route(), keyField),
    base,
    state: plan.state,
    after: plan.after,
    where: plan.where,
    pageNo: 1,
    readThemAll: false,
    read: 0,
    readBefore: base,
  } satisfies Paging;
}

/**
 * Pages through a list route in (updatedAt, key) order, committing each page with its checkpoint; the next page is
 * fetched while the previous one commits. The cursor never moves past the run's start, so a record dated in the
 * future cannot hide the edits made before its date.
 */
export async function syncListed(run: Run, spec: VariantSpec, mode: SyncMode): Promise<void> {
  const key = run.key(spec.variant);
  const keyField = keyFieldFor(run.collection);
  const ceiling: Position = { updatedAt: run.startedAt, id: '' };
  const plan = await planPass(run, spec, mode, key, keyField, ceiling);
  run.deps.log.debug(
    { collection: run.collection, variant: spec.variant, full: plan.full, resumeFrom: plan.after },
    'sync pass starting',
  );
  const paging: Paging = startPaging(run, spec, key, keyField, ceiling, plan);
  await readPages(paging);
  await endPass(paging);
}
