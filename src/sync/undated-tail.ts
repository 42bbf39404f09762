import { hasMore } from '../partners/list-envelope.js';
import { positionOf } from './position.js';
import type { SyncKey, SyncState } from './store-port.js';
import type { Run } from './sync-run.js';
import type { VariantSpec } from './variants.js';

/** Bounds the undated tail's page-number walk (a filter edits could shift: it stops rather than loop). */
const MAX_TAIL_PAGES = 1000;

/**
 * The records of a full pass without a valid `updatedAt` (null, or not a date), read from the other end of the
 * order: an upstream that sorts nulls last (PostgreSQL's ascending order) puts them after every date, where the
 * pass's keyset filters never reach, so they come first in descending order, by page number (they have no keyset
 * position) until a dated record shows up: one request when there are none. Not asked when the pass's first page
 * held the whole collection, or began with undated records (an upstream that sorts them first, as MongoDB does,
 * has given them already).
 */
export async function syncUndatedTail(
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
    const fetchedAt = run.now();
    const page = await run.listPage(spec.query, pageNo, limit, `-updatedAt,${keyField}`);
    const undated = page.docs.filter((d) => positionOf(d, keyField, run.route()) === null);
    if (undated.length > 0) {
      run.positionsOf(undated, keyField);
      run.counted(await run.commit(key, { upserts: undated, fetchedAt, next: state, seenBy: runId }), undated.length);
    }
    if (undated.length < page.docs.length || page.docs.length === 0 || !hasMore(page, limit)) break;
  }
  return state;
}
