import * as v from 'valibot';
import { isJsonObject, type JsonObject } from '../vocabulary/ids.js';
import type { ListPage } from './partners-client.js';

/** An integer, or a numeric string such as `"10"` (some upstreams echo query values back as sent). */
const Int = v.union([
  v.pipe(v.number(), v.integer()),
  v.pipe(
    v.string(),
    v.trim(),
    v.regex(/^-?\d+$/),
    v.transform((s) => Number(s)),
  ),
]);
const Bool = v.union([
  v.boolean(),
  v.pipe(
    v.picklist(['true', 'false']),
    v.transform((s) => s === 'true'),
  ),
]);
const Doc = v.custom<JsonObject>(isJsonObject, 'each element of docs must be an object');
const opt = <T extends v.GenericSchema>(s: T) => v.optional(v.nullable(s));

/** The list envelope as it may arrive: only `docs` is required; the rest is normalised by `parseListEnvelope`. */
export const ListEnvelopeSchema = v.looseObject({
  docs: v.array(Doc),
  totalDocs: opt(Int),
  limit: opt(Int),
  totalPages: opt(Int),
  page: opt(Int),
  pagingCounter: opt(Int),
  hasPrevPage: opt(Bool),
  hasNextPage: opt(Bool),
  prevPage: opt(Int),
  nextPage: opt(Int),
});

export type ListEnvelopeParse = { ok: true; page: ListPage } | { ok: false; message: string };

/**
 * Validates and normalises a list answer. Tolerates what real Payload upstreams send: numeric strings,
 * `nextPage`/`prevPage` missing or null, a page past the end reporting `totalDocs: 0`, and `pagination=false`
 * answers without metadata (derived from `docs`, with `limit: 0` meaning "not paginated"). Rejects anything whose `docs` is not an
 * array of objects. Never reads its answer back as "the end": use {@link hasMore} for that.
 */
export function parseListEnvelope(
  raw: unknown,
  asked: { readonly limit: number; readonly page?: number; readonly pagination?: boolean },
): ListEnvelopeParse {
  const parsed = v.safeParse(ListEnvelopeSchema, raw);
  if (!parsed.success) return { ok: false, message: v.summarize(parsed.issues) };
  const e = parsed.output;
  const docs = e.docs;
  const unpaged = asked.pagination === false && e.limit == null && e.page == null && e.totalPages == null;
  if (unpaged) {
    return {
      ok: true,
      page: {
        docs,
        totalDocs: e.totalDocs ?? docs.length,
        // 0: no page size was applied; hasMore reads it as "nothing follows".
        limit: 0,
        totalPages: 1,
        page: 1,
        pagingCounter: 1,
        hasPrevPage: false,
        hasNextPage: false,
        prevPage: null,
        nextPage: null,
      },
    };
  }
  const limit = e.limit ?? asked.limit;
  const page = e.page ?? asked.page ?? 1;
  const totalDocs = e.totalDocs ?? (page - 1) * limit + docs.length;
  const totalPages = e.totalPages ?? (limit > 0 ? Math.ceil(totalDocs / limit) : 1);
  const hasNextPage = e.hasNextPage ?? (e.nextPage != null || page < totalPages);
  const hasPrevPage = e.hasPrevPage ?? (e.prevPage != null || page > 1);
  return {
    ok: true,
    page: {
      docs,
      totalDocs,
      limit,
      totalPages,
      page,
      pagingCounter: e.pagingCounter ?? (page - 1) * limit + 1,
      hasPrevPage,
      hasNextPage,
      prevPage: e.prevPage ?? (hasPrevPage ? page - 1 : null),
      nextPage: e.nextPage ?? (hasNextPage ? page + 1 : null),
    },
  };
}

/**
 * Whether another page may follow `page`, asked for with `requestedLimit`.
 *
 * No single field is trusted: upstreams clamp `limit` (sometimes echoing the asked value), omit or null
 * `nextPage`, and report `totalDocs: 0` past the end. Callers keep fetching while any signal says more
 * (`hasNextPage`, a `nextPage`, `page < totalPages`, or a full page: `docs.length >= min(requestedLimit,
 * page.limit)`), and stop at the first empty page, which the spec guarantees past the end. A false "more" costs
 * one extra request that returns an empty page; a false "end" would lose records.
 */
export function hasMore(page: ListPage, requestedLimit: number): boolean {
  if (page.docs.length === 0) return false;
  if (page.hasNextPage || page.nextPage !== null || page.page < page.totalPages) return true;
  // limit 0 marks an unpaginated answer (pagination=false): it holds everything.
  if (page.limit <= 0) return false;
  return page.docs.length >= Math.min(requestedLimit, page.limit);
}
