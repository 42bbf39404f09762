import { randomUUID } from 'node:crypto';
import { hasMore } from '../partners/list-envelope.js';
import type { ListPage, ListQuery } from '../partners/partners-client.js';
import { draftsOnly } from './drafts-only.js';
import { overlapIsComplete } from './overlap-window.js';
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
import { type Position, PUBLISHED, type SyncState } from './store-port.js';
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

/**
 * Pages through a list route in (updatedAt, key) order, committing each page with its checkpoint; the next page is
 * fetched while the previous one commits. The cursor never moves past the run's start, so a record dated in the
 * future cannot hide the edits made before its date.
 */
export async function syncListed(run: Run, spec: VariantSpec, mode: SyncMode): Promise<void> {
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
  let pass: { runId: string; startedAt: string } | null = null;
  let after: Position | null;
  let where: ListQuery['where'];
  const resumable = state.incremental?.after ?? null;
  if (full) {
    // A pass resumed after a crash keeps its run id and start: rows written since that start stay not its to delete.
    pass = state.full ? { runId: state.full.runId, startedAt: state.full.startedAt } : null;
    after = state.full?.after ?? null;
    if (!pass) {
      pass = { runId: randomUUID(), startedAt: run.now() };
      state = { ...state, full: { ...pass, after: null }, incremental: null };
      await run.saveState(key, state);
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
  const sort = `updatedAt,${keyField}`;
  // One page fetched ahead at most; cancelled when the pass stops before using it.
  const ahead = new AbortController();
  const fetchPage = (pageNo: number, w: ListQuery['where']): Promise<Fetched> => {
    const fetchedAt = run.now();
    const fetched = run
      .listPage(spec.query, pageNo, limit, sort, w, ahead.signal)
      .then((page) => ({ page, fetchedAt }));
    // Awaited once the page before it has committed: a failure meanwhile (the commit yields, as PostgreSQL's do)
    // must not be an unhandled rejection. The await below still sees it, and fails this collection alone.
    fetched.catch(() => undefined);
    return fetched;
  };
  // Page numbers only while the pass holds no position yet: records without a date (sorted first) carry none.
  let pageNo = 1;
  // Records without a date carry no keyset position: an upstream that sorts them last (PostgreSQL's nulls last)
  // puts them after every date, where keyset filters never reach. A pass from the start has read them only when
  // its first page held the whole collection, or began with them (the upstream sorts them first); else the undated
  // tail goes back for them. (Comparing the records read with the first page's totalDocs cannot tell: records
  // created during the pass make up for undated ones never read.)
  let readThemAll = false;
  let read = 0;
  // What was read before the current `where`: its pages' totalDocs counts only what is left (progress totals).
  const base = run.report.fetched;
  let readBefore = base;
  run.checkStop();
  let pending: Promise<Fetched> | null = fetchPage(pageNo, where);
  try {
    while (pending) {
      const { page, fetchedAt } = await pending;
      pending = null;
      const docs = page.docs;
      if (full && !where && pageNo === 1) {
        const first = docs[0];
        readThemAll =
          !hasMore(page, limit) || (first !== undefined && positionOf(first, keyField, run.route()) === null);
      }
      const expected = readBefore + page.totalDocs;
      read += docs.length;
      const last = run.positionsOf(docs, keyField);
      progress.check(docs, after, last);
      const moved = last !== null;
      if (last) after = last;
      const more = docs.length > 0 && hasMore(page, limit);
      if (more) {
        if (moved && after) {
          where = afterWhere(after, keyField);
          pageNo = 1;
          readBefore = base + read;
        } else pageNo++;
        // Fetch the next page while this one commits, unless a stop was asked for (this page still commits).
        if (!run.stopRequested()) pending = fetchPage(pageNo, where);
      }
      if (docs.length > 0) {
        state = pass
          ? { ...state, full: { ...pass, after } }
          : { ...state, cursor: laterOf(state.cursor, earlierOf(last, ceiling)), incremental: { after } };
        const counts = await run.commit(key, {
          upserts: docs,
          fetchedAt,
          next: state,
          ...(pass ? { seenBy: pass.runId } : {}),
        });
        run.counted(counts, docs.length, expected);
        log.debug(
          { collection: run.collection, variant: spec.variant, docs: docs.length, changed: counts.changes.length },
          'page committed',
        );
      }
      if (more && run.stopRequested()) {
        // A graceful stop: the page fetched ahead is committed too when its answer lands within STOP_GRACE_MS
        // (a request answered and thrown away would be spent again by the next run); else it is cancelled.
        if (!pending || !(await landsWithin(pending, STOP_GRACE_MS))) run.checkStop();
      }
    }
  } finally {
    if (pending) ahead.abort(); // no longer wanted: its failure is nobody's (handled in fetchPage)
  }
  if (pass && !readThemAll) state = await syncUndatedTail(run, spec, key, state, pass.runId, keyField, limit);
  const reached = earlierOf(after, ceiling);
  // A full pass read everything: its own position replaces the cursor (repairing one left past now).
  const cursor = full ? reached : laterOf(state.cursor, reached);
  const finalState: SyncState = { ...state, incremental: null };
  if (!pass) return finishPass(run, key, finalState, cursor, null);
  const { runId, startedAt } = pass;
  const unpublished = async () => (spec.variant === PUBLISHED ? draftsOnly(run, key, runId, startedAt, keyField) : []);
  await finishPass(run, key, finalState, cursor, { runId, startedAt, unpublished });
}
