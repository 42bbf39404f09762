import { COLLECTIONS, type CollectionSlug } from '../vocabulary/collections.js';
import type { ReadRoutes } from './discover-routes.js';
import { edgesTo } from './references.js';

/** How a collection can be reached, or why it cannot. */
export type Reach =
  | { readonly how: 'list' }
  | { readonly how: 'get' }
  | { readonly how: 'embedded'; readonly from: CollectionSlug }
  | { readonly how: 'none'; readonly reason: string };

export function reachOf(c: CollectionSlug, routes: ReadRoutes): Reach {
  return reachability(routes).get(c) ?? { how: 'none', reason: 'unknown collection' };
}

/**
 * How every collection is reached. Listed ones directly; one with a get route when a collection that is itself
 * reached references it (so ids can be found); one with no read route when a listed collection embeds it.
 */
export function reachability(routes: ReadRoutes): Map<CollectionSlug, Reach> {
  const reach = new Map<CollectionSlug, Reach>();
  for (const c of COLLECTIONS) if (routes.list.has(c)) reach.set(c, { how: 'list' });
  for (let grew = true; grew; ) {
    grew = false;
    for (const c of COLLECTIONS) {
      if (reach.has(c)) continue;
      const edges = edgesTo(c).filter((e) => e.from !== c);
      if (routes.get.has(c) && edges.some((e) => reach.has(e.from))) {
        reach.set(c, { how: 'get' });
        grew = true;
      } else {
        const from = edges.find((e) => routes.list.has(e.from));
        if (from) {
          reach.set(c, { how: 'embedded', from: from.from });
          grew = true;
        }
      }
    }
  }
  for (const c of COLLECTIONS) {
    if (reach.has(c)) continue;
    const reason = routes.get.has(c)
      ? 'no list route, and no reachable collection references its records'
      : 'no list or get route, and no listable collection embeds its records';
    reach.set(c, { how: 'none', reason });
  }
  return reach;
}
