import type { Position, SyncKey } from '../store/store.js';
import { EPOCH, keyFieldFor } from './position.js';
import type { Run } from './sync-run.js';
import type { VariantSpec } from './variants.js';

/** Above this many mirrored rows in the overlap window, counting them upstream first is cheaper than re-reading. */
const OVERLAP_COUNT_ROWS = 100;

/**
 * Whether the overlap window before the cursor (kept for late upstream commits) holds, upstream, exactly the rows
 * the mirror holds there, so an incremental run may start right after the cursor. Asked (one `limit=1` request)
 * only when the window holds more than `OVERLAP_COUNT_ROWS` mirrored rows: a burst of edits sharing one second
 * would otherwise be fetched again, page after page, by every next run. A smaller window is simply re-read.
 */
export async function overlapIsComplete(run: Run, spec: VariantSpec, key: SyncKey, cursor: Position): Promise<boolean> {
  const to = Date.parse(cursor.updatedAt);
  if (cursor === EPOCH || Number.isNaN(to)) return false;
  const from = new Date(Math.max(0, to - (run.deps.overlapMs ?? 1000))).toISOString();
  const upTo = new Date(to).toISOString();
  const mirrored = await run.deps.store.countUpdatedBetween(key, from, upTo);
  if (mirrored <= OVERLAP_COUNT_ROWS) return false;
  const where = { and: [{ updatedAt: { greater_than_equal: from } }, { updatedAt: { less_than_equal: upTo } }] };
  const page = await run.listPage(spec.query, 1, 1, `updatedAt,${keyFieldFor(run.collection)}`, where);
  return page.totalDocs === mirrored;
}
