import qs from 'qs';
import type { ListQuery, ReadQuery } from './partners-client.js';

type QueryParams = Omit<ListQuery, 'collection' | 'limit'> & { readonly limit?: number };

/**
 * Encodes read options as a Payload query string (without the leading `?`): nested objects in brackets,
 * arrays by index (`where[or][0][updatedAt][greater_than]=…`), booleans as `true`/`false`, undefined left out.
 * Keys and values are percent-encoded, so the brackets travel as `%5B`/`%5D`, which Payload's qs parser reads alike.
 */
export function toQueryString(q: QueryParams | ReadQuery): string {
  const list = q as QueryParams;
  // A fixed key order keeps URLs stable for logs and caches.
  const params = {
    limit: list.limit,
    page: list.page,
    sort: list.sort,
    where: list.where,
    pagination: list.pagination,
    depth: q.depth,
    draft: q.draft,
    locale: q.locale,
    fallbackLocale: q.fallbackLocale,
    select: q.select,
    populate: q.populate,
    joins: q.joins,
  };
  return qs.stringify(params, { arrayFormat: 'indices', skipNulls: false, allowDots: false });
}

/** `path` plus `?query` when the query is not empty. */
export const withQuery = (path: string, query: string): string => (query ? `${path}?${query}` : path);
