import { describeError, UpstreamError } from '../errors.js';
import type { ListQuery } from '../partners/partners-client.js';
import type { SyncKey } from '../store/store.js';
import { VERSIONED } from '../vocabulary/collections.js';
import type { UpstreamDoc } from '../vocabulary/ids.js';
import type { Run } from './sync-run.js';

const DRAFT_LOOKUP_BATCH = 100;

/**
 * Of the published rows a full sync did not see, those that still exist upstream as drafts: a Payload-style
 * upstream leaves a draft-only record out of published reads, and a record that is only a draft is not deleted.
 * One `draft=true` read per 100 ids, versioned collections only.
 */
export async function draftsOnly(run: Run, key: SyncKey, runId: string, keyField: string): Promise<string[]> {
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
