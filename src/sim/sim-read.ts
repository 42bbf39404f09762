import type { JsonObject } from '../ids.js';
import type { CollectionSlug } from '../partners/collections.js';
import { viewOf } from './sim-db.js';
import { compileWhere, type LocaleCtx, SimHttpError } from './sim-query.js';
import { type ShapeCtx, shapeDoc } from './sim-shape.js';

/** Payload's default order when no `sort` is given. */
export const DEFAULT_SORT = '-createdAt';

/** One list page in the spec's envelope (mongoose-paginate-v2 arithmetic, as Payload uses). */
export function listDocs(c: CollectionSlug, ctx: ShapeCtx): JsonObject {
  const { params, tenant } = ctx;
  const data = tenant.collections[c];
  const lc: LocaleCtx = { locale: params.locale, fallback: params.fallbackLocale };
  const sort = params.sort ?? DEFAULT_SORT;
  let matched = data.ordered(sort, params.draft, lc);
  if (params.where && Object.keys(params.where).length > 0) {
    const pred = compileWhere(params.where, data.fields, lc);
    matched = data.filtered(sort, params.draft, lc, JSON.stringify(params.where), (r) => pred(viewOf(r, params.draft)));
  }
  const totalDocs = matched.length;
  const shape = (recs: typeof matched): JsonObject[] =>
    recs.map((r) => shapeDoc(c, viewOf(r, params.draft), ctx, params.depth));
  if (!params.pagination || params.limit === 0) {
    return {
      docs: shape(matched),
      totalDocs,
      limit: totalDocs,
      totalPages: 1,
      page: 1,
      pagingCounter: 1,
      hasPrevPage: false,
      hasNextPage: false,
      prevPage: null,
      nextPage: null,
    };
  }
  const { limit, page } = params;
  const totalPages = Math.ceil(totalDocs / limit) || 1;
  const start = (page - 1) * limit;
  return {
    docs: shape(matched.slice(start, start + limit)),
    totalDocs,
    limit,
    totalPages,
    page,
    pagingCounter: start + 1,
    hasPrevPage: page > 1,
    hasNextPage: page < totalPages,
    prevPage: page > 1 ? page - 1 : null,
    nextPage: page < totalPages ? page + 1 : null,
  };
}

export const notFound = (): SimHttpError => new SimHttpError(404, 'Not Found');

/** One record by id (media: by filename). */
export function getDoc(c: CollectionSlug, id: string, ctx: ShapeCtx): JsonObject {
  const rec = ctx.tenant.collections[c].byId.get(id);
  if (!rec) throw notFound();
  return shapeDoc(c, viewOf(rec, ctx.params.draft), ctx, ctx.params.depth);
}
