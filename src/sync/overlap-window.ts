import { EPOCH, keyFieldFor } from './position.js';
import type { Position, SyncKey } from './store-port.js';
import { DEFAULT_PAGE_SIZE, type Run } from './sync-run.js';
import type { VariantSpec } from './variants.js';

/** Ids per membership request: the same batch the draft look-up uses, a query string of a few KiB. */
const MEMBERSHIP_BATCH = 100;

/** The mirrored versions of the window as the proof asks for them: per instant, ids in batches. */
function versionBatches(versions: readonly Position[]): { updatedAt: string; ids: string[] }[] {
  const byInstant = new Map<string, string[]>();
  for (const v of versions) {
    const ids = byInstant.get(v.updatedAt);
    if (ids) ids.push(v.id);
    else byInstant.set(v.updatedAt, [v.id]);
  }
  const out: { updatedAt: string; ids: string[] }[] = [];
  for (const [updatedAt, ids] of byInstant)
    for (let i = 0; i < ids.length; i += MEMBERSHIP_BATCH)
      out.push({ updatedAt, ids: ids.slice(i, i + MEMBERSHIP_BATCH) });
  return out;
}

/**
 * Whether the overlap window before the cursor (kept for late upstream commits) holds, upstream, exactly the
 * versions the mirror holds there, so an incremental run may start right after the cursor instead of re-reading it.
 *
 * A window that fits in one page is simply re-read (the pass reads that page anyway). A larger one (a burst of
 * edits sharing one instant) is proved complete without reading it: one `limit=1` count of the window upstream,
 * and, per instant the mirror holds in it, one count per 100 of its ids of the records still at exactly that
 * `updatedAt` upstream. Every mirrored (id, updatedAt) found upstream, and no more records in the window than the
 * mirror holds, means the two sets of versions are equal: a record that left the window, was deleted, committed
 * late into it, or was re-dated within it (count and ids unchanged) each fails one of the counts, and the window
 * is re-read. When the mirrored instants are so many that the proof would cost more requests than re-reading the
 * window (at 100 records a page, a common clamp), the window is re-read.
 */
export async function overlapIsComplete(run: Run, spec: VariantSpec, key: SyncKey, cursor: Position): Promise<boolean> {
  const to = Date.parse(cursor.updatedAt);
  if (cursor === EPOCH || Number.isNaN(to)) return false;
  const from = new Date(Math.max(0, to - (run.deps.overlapMs ?? 1000))).toISOString();
  const upTo = new Date(to).toISOString();
  const pageSize = run.deps.pageSize ?? DEFAULT_PAGE_SIZE;
  const mirrored = await run.deps.store.countUpdatedBetween(key, from, upTo);
  if (mirrored < pageSize) return false;
  const batches = versionBatches(await run.deps.store.versionsUpdatedBetween(key, from, upTo));
  if (batches.length > Math.ceil(mirrored / Math.min(pageSize, MEMBERSHIP_BATCH))) return false;
  const keyField = keyFieldFor(run.collection);
  const sort = `updatedAt,${keyField}`;
  const window = [{ updatedAt: { greater_than_equal: from } }, { updatedAt: { less_than_equal: upTo } }];
  const all = await run.listPage(spec.query, 1, 1, sort, { and: window });
  if (all.totalDocs !== mirrored) return false;
  for (const b of batches) {
    const page = await run.listPage(spec.query, 1, 1, sort, {
      and: [{ updatedAt: { equals: b.updatedAt } }, { [keyField]: { in: b.ids } }],
    });
    if (page.totalDocs !== b.ids.length) return false;
  }
  return true;
}
