import type { CollectionSlug } from '../vocabulary/collections.js';
import type { ReadRoutes } from './discover-routes.js';
import { prerequisitesOf } from './sync-tenant.js';

/**
 * Whether a collection reached by reference must wait: one of the collections it is reached through, among those
 * the tenant wants, still has a sync pending (`isPending`, asked in order until one says yes). A queued job of it
 * then waits, as inline sync orders them, so it sees what that one mirrors.
 */
export async function prerequisitesPending(
  collection: CollectionSlug,
  wanted: readonly CollectionSlug[],
  routes: ReadRoutes,
  isPending: (collection: CollectionSlug) => Promise<boolean>,
): Promise<boolean> {
  for (const c of prerequisitesOf(collection, routes)) if (wanted.includes(c) && (await isPending(c))) return true;
  return false;
}
