import { describeError, UpstreamError } from '../errors.js';
import { hasMore } from '../partners/list-envelope.js';
import type { ListQuery } from '../partners/partners-client.js';
import { VERSIONED } from '../vocabulary/collections.js';
import type { SyncKey } from './store-port.js';
import type { Run } from './sync-run.js';

const DRAFT_LOOKUP_BATCH = 100;
/** Bounds the pages of one look-up (an upstream that ignores `page` would otherwise answer page 1 for ever). */
const MAX_LOOKUP_PAGES = DRAFT_LOOKUP_BATCH;

/**
 * Of the published rows a full sync did not see, those that still exist upstream as drafts: a Payload-style
 * upstream leaves a draft-only record out of published reads, and a record that is only a draft is not deleted.
 * One `draft=true` read per 100 ids, versioned collections only, paged until every id is answered or the upstream
 * says there is no more (an upstream that clamps the page below 100 answers in several pages).
 */
export async function draftsOnly(
  run: Run,
  key: SyncKey,
  runId: string,
  startedAt: string,
  keyField: string,
): Promise<string[]> {
  if (!VERSIONED.has(run.collection)) return [];
  const unseen = await run.deps.store.unseenIds(key, runId, startedAt);
  const found = new Set<string>();
  lookup: for (let i = 0; i < unseen.length; i += DRAFT_LOOKUP_BATCH) {
    const ids = unseen.slice(i, i + DRAFT_LOOKUP_BATCH);
    const answered = new Set<string>();
    for (let page = 1; page <= MAX_LOOKUP_PAGES; page++) {
      run.checkStop();
      const q: ListQuery = {
        collection: run.collection,
        where: { [keyField]: { in: ids } },
        draft: true,
        depth: 0,
        limit: ids.length,
        page,
        sort: keyField,
      };
      let listed: Awaited<ReturnType<typeof run.deps.client.listPage>>;
      try {
        listed = await run.deps.client.listPage(q, run.opts);
      } catch (err) {
        // An upstream that refuses the lookup (e.g. no `in` operator) gets the deletions it got before.
        if (!(err instanceof UpstreamError) || err.code !== 'US_UPSTREAM') throw err;
        run.deps.log.warn({ collection: run.collection, err: describeError(err) }, 'draft lookup refused');
        break lookup;
      }
      const before = answered.size;
      for (const doc of listed.docs) {
        const id = doc[keyField];
        if (typeof id === 'string' || typeof id === 'number' || typeof id === 'bigint') answered.add(String(id));
      }
      // Done when every id is answered, the upstream has no more, or a page brought nothing new.
      if (answered.size >= ids.length || !hasMore(listed, ids.length) || answered.size === before) break;
    }
    for (const id of answered) found.add(id);
  }
  if (found.size > 0) {
    run.deps.log.info(
      { collection: run.collection, drafts: found.size },
      'full sync: records not in published reads exist as drafts; not marked deleted',
    );
  }
  return [...found];
}
