import { describeError, hasCode } from '../errors.js';
import type { Logger } from '../log.js';
import { hasMore } from '../partners/list-envelope.js';
import type { CallOptions, ListQuery, PartnersClient } from '../partners/partners-client.js';
import { type CollectionSlug, VERSIONED } from '../vocabulary/collections.js';
import type { SyncKey } from './store-port.js';
import type { Run } from './sync-run.js';

const DRAFT_LOOKUP_BATCH = 100;
/** Bounds the pages of one look-up (an upstream that ignores `page` would otherwise answer page 1 for ever). */
const MAX_LOOKUP_PAGES = DRAFT_LOOKUP_BATCH;

/** What a draft look-up needs: the client and its call options, a log, and a check between requests. */
export interface DraftLookupDeps {
  readonly client: PartnersClient;
  readonly opts: CallOptions;
  /** Told when the upstream refuses the look-up. */
  readonly log?: Pick<Logger, 'warn'>;
  /** Called before each request; throws to stop (a graceful stop of the run). */
  readonly checkStop?: () => void;
}

/**
 * Of `ids`, those that exist upstream as drafts: a Payload-style upstream leaves a record that is only a draft (never
 * published, or unpublished) out of published reads, and `draft=true` reads still list it. One `draft=true` read
 * per 100 ids, versioned collections only, paged until every id is answered or the upstream says there is no more
 * (an upstream that clamps the page below 100 answers in several pages). An upstream that refuses the look-up (no
 * `in` operator, say) finds none: logged, not thrown.
 */
export async function existingAsDrafts(
  deps: DraftLookupDeps,
  collection: CollectionSlug,
  keyField: string,
  ids: readonly string[],
): Promise<string[]> {
  if (!VERSIONED.has(collection)) return [];
  const found = new Set<string>();
  lookup: for (let i = 0; i < ids.length; i += DRAFT_LOOKUP_BATCH) {
    const batch = ids.slice(i, i + DRAFT_LOOKUP_BATCH);
    const answered = new Set<string>();
    for (let page = 1; page <= MAX_LOOKUP_PAGES; page++) {
      deps.checkStop?.();
      const q: ListQuery = {
        collection,
        where: { [keyField]: { in: batch } },
        draft: true,
        depth: 0,
        limit: batch.length,
        page,
        sort: keyField,
      };
      let listed: Awaited<ReturnType<PartnersClient['listPage']>>;
      try {
        listed = await deps.client.listPage(q, deps.opts);
      } catch (err) {
        if (!hasCode(err, 'US_UPSTREAM')) throw err;
        deps.log?.warn({ collection, err: describeError(err) }, 'draft lookup refused');
        break lookup;
      }
      const before = answered.size;
      for (const doc of listed.docs) {
        const id = doc[keyField];
        if (typeof id === 'string' || typeof id === 'number' || typeof id === 'bigint') answered.add(String(id));
      }
      // Done when every id is answered, the upstream has no more, or a page brought nothing new.
      if (answered.size >= batch.length || !hasMore(listed, batch.length) || answered.size === before) break;
    }
    for (const id of answered) found.add(id);
  }
  return [...found];
}

/**
 * Of the published rows a full sync did not see, those that still exist upstream as drafts: unpublished records
 * (or records that were never published), which the end of the pass tombstones as `unpublished` rather than
 * `deleted`. An upstream that refuses the look-up gets every unseen row tombstoned as deleted, as before.
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
  const deps = { client: run.deps.client, opts: run.opts, log: run.deps.log, checkStop: () => run.checkStop() };
  const found = await existingAsDrafts(deps, run.collection, keyField, unseen);
  if (found.length > 0) {
    run.deps.log.info(
      { collection: run.collection, unpublished: found.length },
      'full sync: records not in published reads exist as drafts; tombstoned as unpublished',
    );
  }
  return found;
}
