import { randomUUID } from 'node:crypto';
import { hasMore } from '../partners/list-envelope.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import type { UpstreamDoc } from '../vocabulary/ids.js';
import { PageProgress } from './page-progress.js';
import { afterWhere, keyFieldFor, laterOf, positionOf } from './position.js';
import { edgesTo, populatedDocs, refId } from './references.js';
import type { Position, SyncState } from './store-port.js';
import { DEFAULT_PAGE_SIZE, finishPass, type Run, type SyncMode } from './sync-run.js';
import type { VariantSpec } from './variants.js';

/**
 * Takes records populated inside a listable collection that references them (depth=1), for collections with
 * neither a list nor a get route. Incremental runs do this only while the mirror holds none of them yet:
 * an edit to an embedded record does not change its parent's updatedAt, so only a full run sees it.
 */
export async function syncEmbedded(run: Run, spec: VariantSpec, mode: SyncMode, from: CollectionSlug): Promise<void> {
  const { store, client } = run.deps;
  const key = run.key(spec.variant);
  const state = await store.getSyncState(key);
  if (mode === 'incremental' && state.cursor !== null && (await store.liveIds(key)).size > 0) {
    await run.saveState(key, { ...state, lastSuccessAt: run.now(), lastError: null });
    return;
  }
  const edges = edgesTo(run.collection).filter((e) => e.from === from);
  const fields = edges.map((e) => e.path[0] as string);
  const limit = run.deps.pageSize ?? DEFAULT_PAGE_SIZE;
  const keyField = keyFieldFor(from);
  const pass = { runId: randomUUID(), startedAt: run.now() };
  const running: SyncState = { ...state, full: { ...pass, after: null } };
  await run.saveState(key, running);
  // Only the embedding fields, populated one level, every joined record (`limit: 0`: Payload caps joins at 10).
  const select = Object.fromEntries(fields.map((f) => [f, true]));
  const joins = Object.fromEntries(fields.map((f) => [f, { limit: 0 }]));
  let after: Position | null = null;
  const progress = new PageProgress(`/partners/{version}/{tenant}/${from}`, keyField);
  for (;;) {
    run.checkStop();
    // Keyset paging over the parents, as for listed collections: parents created, edited or deleted mid-run
    // cannot shift the others across a page boundary.
    const fetchedAt = run.now();
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
    if (found.size > 0) {
      const batch = { upserts: [...found.values()], fetchedAt, next: running, seenBy: pass.runId };
      run.counted(await run.commit(key, batch), found.size);
    }
    if (page.docs.length === 0 || !hasMore(page, limit)) break;
  }
  await finishPass(run, key, running, state.cursor, pass);
}
