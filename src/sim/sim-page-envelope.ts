import type { JsonObject } from '../vocabulary/ids.js';

// The simulator's list envelope, shared with serve's reads from the mirror (src/reads), so both page alike.

/** A list page's window in the matches: rows to skip and to take (null: every match). */
export const pageWindow = (limit: number, page: number): { offset: number; limit: number | null } =>
  limit === 0 ? { offset: 0, limit: null } : { offset: (page - 1) * limit, limit };

/**
 * The spec's list envelope as Payload 3's database adapters fill it in: a page past the end answers `totalDocs 0,
 * totalPages 0, page 1, pagingCounter 0` (page 1 matching nothing the same with `pagingCounter 1`); `limit=0` and
 * `pagination=false` answer what came back with `totalPages 1`, counting nothing.
 */
export function pageEnvelope(
  docs: JsonObject[],
  total: number | null,
  p: { readonly limit: number; readonly page: number; readonly pagination: boolean },
): JsonObject {
  const { limit, page } = p;
  if (!p.pagination || docs.length === 0 || limit === 0 || total === null) {
    const empty = docs.length === 0 && p.pagination;
    return {
      docs,
      totalDocs: docs.length,
      limit,
      totalPages: empty ? 0 : 1,
      page: empty ? 1 : page,
      pagingCounter: empty && page !== 1 ? 0 : 1,
      hasPrevPage: false,
      hasNextPage: false,
      prevPage: null,
      nextPage: null,
    };
  }
  const totalPages = Math.ceil(total / limit);
  return {
    docs,
    totalDocs: total,
    limit,
    totalPages,
    page,
    pagingCounter: (page - 1) * limit + 1,
    hasPrevPage: page > 1,
    hasNextPage: page < totalPages,
    prevPage: page > 1 ? page - 1 : null,
    nextPage: page < totalPages ? page + 1 : null,
  };
}
