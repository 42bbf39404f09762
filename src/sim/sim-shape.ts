import type { CollectionSlug } from '../vocabulary/collections.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../vocabulary/ids.js';
import type { SimParams } from './parse-params.js';
import { type TenantData, visibleView } from './sim-db.js';
import { applySelect, isLocaleObject, type LocaleCtx, resolveLocale } from './sim-query.js';
import { JOINS, LOCALIZED, RELATIONSHIPS, STATIC_JOINS } from './sim-schema.js';

export interface ShapeCtx {
  readonly tenant: TenantData;
  readonly params: SimParams;
  /** Origin of the simulator, prefixed to media delivery URLs. */
  readonly origin: string;
}

const DEFAULT_JOIN_LIMIT = 10;

const joinLimit = (params: SimParams, field: string): number => {
  if (!params.joins) return DEFAULT_JOIN_LIMIT;
  const j = params.joins[field];
  if (isJsonObject(j) && typeof j.limit === 'string' && /^\d+$/.test(j.limit)) return Number(j.limit);
  return DEFAULT_JOIN_LIMIT;
};

/**
 * Payload's default `maxDepth` of a join field (`sanitizeJoinField`): a join populates its docs only on the
 * requested record itself, never inside a populated one, and what it populates goes no deeper.
 */
const JOIN_MAX_DEPTH = 1;

/**
 * A stored document as the API returns it: locale resolved, relationships and joins to `depth`, select applied.
 * As Payload's `afterRead`, `level` is the document's own level (1 for the requested record): a relationship is
 * populated while `level <= depth`, its record read one level down; a join while `level <= min(depth, 1)`, its
 * records read with depth 1, so everything inside them stays an id.
 */
export function shapeDoc(c: CollectionSlug, stored: JsonObject, ctx: ShapeCtx, depth: number, level = 1): JsonObject {
  const { params } = ctx;
  const lc: LocaleCtx = { locale: params.locale, fallback: params.fallbackLocale };
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(stored)) {
    out[k] = LOCALIZED.has(k) && isLocaleObject(v) ? resolveLocale(v, lc) : v;
  }
  if (level <= depth) {
    // The record's own tenant is a relationship too (to the tenants collection, not exposed): populated likewise.
    if (typeof out.tenant === 'string' && out.tenant === ctx.tenant.slug) out.tenant = tenantDoc(ctx);
    for (const rel of RELATIONSHIPS[c]) {
      const v = out[rel.field];
      if (v === undefined || v === null) continue;
      const one = (x: JsonValue): JsonValue => populate(rel.to, x, ctx, depth, level + 1);
      out[rel.field] = Array.isArray(v) ? v.map(one) : one(v);
    }
  }
  if (params.joins !== false) {
    const id = String(stored.id);
    const joinDepth = Math.min(depth, JOIN_MAX_DEPTH);
    for (const j of JOINS[c]) {
      const ids = ctx.tenant.collections[j.from].pointingAt(j.on, id);
      const limit = joinLimit(params, j.field);
      const page = limit === 0 ? ids : ids.slice(0, limit);
      out[j.field] = {
        docs: level <= joinDepth ? page.map((x) => populate(j.from, x, ctx, joinDepth, level + 1)) : [...page],
        hasNextPage: limit !== 0 && ids.length > limit,
      };
    }
    for (const f of STATIC_JOINS[c] ?? []) out[f] = { docs: [], hasNextPage: false };
  }
  if (c === 'media') {
    delete out.id;
    for (const f of ['url', 'src']) {
      const u = out[f];
      if (typeof u === 'string' && u.startsWith('/')) out[f] = ctx.origin + u;
    }
  }
  return params.select && level === 1 ? applySelect(out, params.select, c !== 'media') : out;
}

/** The populated tenant: what the tenants collection holds about it (it has no relationships of its own). */
const tenantDoc = (ctx: ShapeCtx): JsonObject => ({
  id: ctx.tenant.slug,
  name: ctx.tenant.name,
  slug: ctx.tenant.slug,
});

/**
 * A populated relationship: the related record read at `level`, or the bare id if it no longer exists or the
 * read may not see it (a never-published record in a published read), as Payload leaves an id it cannot populate.
 */
function populate(to: CollectionSlug, v: JsonValue, ctx: ShapeCtx, depth: number, level: number): JsonValue {
  if (typeof v !== 'string') return v;
  const rec = ctx.tenant.collections[to].byId.get(v);
  const view = rec ? visibleView(to, rec, ctx.params.draft) : undefined;
  if (!view) return v;
  const doc = shapeDoc(to, view, ctx, depth, level);
  const sel = ctx.params.populate?.[to];
  return isJsonObject(sel) ? applySelect(doc, sel, to !== 'media') : doc;
}
