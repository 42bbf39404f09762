import { EPOCH, keyFieldFor } from './position.js';
import type { Position, SyncKey } from './store-port.js';
import { DEFAULT_PAGE_SIZE, type Run } from './sync-run.js';
import type { VariantSpec } from './variants.js';

/** Ids per membership request: the same batch the draft look-up uses, a query string of a few KiB. */
const MEMBERSHIP_BATCH = 100;

/**
 * Whether the overlap window before the cursor (kept for late upstream commits) holds, upstream, exactly the rows
 * the mirror holds there, so an incremental run may start right after the cursor instead of re-reading it.
 *
 * A window that fits in one page is simply re-read (the pass reads that page anyway). A larger one (a burst of
 * edits sharing one second) is proved complete without reading it: one `limit=1` count of the window upstream, and
 * one count per 100 mirrored ids of those still in the window upstream. Equal counts alone can be fooled by two
 * changes that cancel out (a record edited out of the window, or deleted, plus a late commit into it); the
 * membership counts cannot: if every mirrored id is still in the window and the window holds no more records than
 * the mirror, the two sets are equal. Any difference, and the window is re-read.
 */
export async function overlapIsComplete(run: Run, spec: VariantSpec, key: SyncKey, cursor: Position): Promise<boolean> {
  const to = Date.parse(cursor.updatedAt);
  if (cursor === EPOCH || Number.isNaN(to)) return false;
  const from = new Date(Math.max(0, to - (run.deps.overlapMs ?? 1000))).toISOString();
  const upTo = new Date(to).toISOString();
  const mirrored = await run.deps.store.countUpdatedBetween(key, from, upTo);
  if (mirrored < (run.deps.pageSize ?? DEFAULT_PAGE_SIZE)) return false;
  const keyField = keyFieldFor(run.collection);
  const sort = `updatedAt,${keyField}`;
  const window = [{ updatedAt: { greater_than_equal: from } }, { updatedAt: { less_than_equal: upTo } }];
  const all = await run.listPage(spec.query, 1, 1, sort, { and: window });
  if (all.totalDocs !== mirrored) return false;
  const ids = await run.deps.store.idsUpdatedBetween(key, from, upTo);
  if (ids.length !== mirrored) return false;
  for (let i = 0; i < ids.length; i += MEMBERSHIP_BATCH) {
    const batch = ids.slice(i, i + MEMBERSHIP_BATCH);
    const page = await run.listPage(spec.query, 1, 1, sort, { and: [...window, { [keyField]: { in: batch } }] });
    if (page.totalDocs !== batch.length) return false;
  }
  return true;
}
