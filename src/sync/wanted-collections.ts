import { COLLECTIONS, type CollectionSlug } from '../vocabulary/collections.js';

/**
 * The collections a tenant wants mirrored: the ones its config names, or every collection when it names none.
 * Scheduled syncs, worker jobs, the sync after a bulk write and the self-check all ask this one function.
 */
export const wantedCollections = (target: {
  readonly collections?: readonly CollectionSlug[] | undefined;
}): readonly CollectionSlug[] =>
  target.collections && target.collections.length > 0 ? target.collections : COLLECTIONS;
