import type { CollectionSlug } from '../vocabulary/collections.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../vocabulary/ids.js';
import type { SimParams } from './parse-params.js';
import { type KeyEntry, lowerBound, type StoredRecord, type TenantData, viewOf, visibleView } from './sim-db.js';
import { pageEnvelope, pageWindow } from './sim-page-envelope.js';
import { compileWhere, type LocaleCtx, type Relation, SimHttpError } from './sim-query.js';
import { RELATIONSHIPS } from './sim-schema.js';
import { type ShapeCtx, shapeDoc } from './sim-shape.js';

/** Payload's default order when no `sort` is given. */
export const DEFAULT_SORT = '-createdAt';

/** How a `where` reaches through each relationship field of `c` to the related record, as the read sees it. */
export const relationFor =
  (t: TenantData, c: CollectionSlug, draft: boolean): Relation =>
  (field) => {
    const rel = RELATIONSHIPS[c].find((r) => r.field === field);
    if (!rel) return undefined;
    const data = t.collections[rel.to];
    return {
      known: data.fields,
      lookup: (id) => {
        const r = data.byId.get(id);
        return r ? visibleView(rel.to, r, draft) : undefined;
      },
      relation: relationFor(t, rel.to, draft),
    };
  };

/** Records matching a list request's `where`, in its `sort` order (ties by id). */
export function matchingRecords(c: CollectionSlug, t: TenantData, params: SimParams): readonly StoredRecord[] {
  const data = t.collections[c];
  const lc: LocaleCtx = { locale: params.locale, fallback: params.fallbackLocale };
  const sort = params.sort ?? DEFAULT_SORT;
  if (!params.where || Object.keys(params.where).length === 0) return data.ordered(sort, params.draft, lc);
  const pred = compileWhere(params.where, data.fields, lc, relationFor(t, c, params.draft));
  return data.filtered(sort, params.draft, lc, JSON.stringify(params.where), (r) => pred(viewOf(r, params.draft)));
}

const KEYSET_SORTS = new Set(['updatedAt', 'updatedAt,id', 'updatedAt,filename', '+updatedAt', '+updatedAt,id']);

const instantOf = (v: JsonValue | undefined): number | undefined => {
  if (typeof v !== 'string' && typeof v !== 'number') return undefined;
  const t = Date.parse(String(v));
  return Number.isNaN(t) ? undefined : t;
};

const only = (o: JsonValue | undefined, key: string): JsonValue | undefined =>
  isJsonObject(o) && Object.keys(o).length === 1 ? o[key] : undefined;

const listOf = (v: JsonValue | undefined): JsonValue[] | undefined =>
  Array.isArray(v) ? v : isJsonObject(v) ? Object.values(v) : undefined;

/** Where a keyset `where` starts in `(updatedAt, id)` order; null for no `where`; undefined when not a keyset one. */
type KeysetStart = { t: number; id: string; after: boolean } | null;

/**
 * Recognises the `where`s of keyset paging on `(updatedAt, id)`: none; `updatedAt >= u`; `updatedAt > u`; and
 * `updatedAt > u OR (updatedAt = u AND id > i)`. Each matches exactly the non-null records from one key on.
 */
function keysetStart(where: JsonObject | undefined, keyField: string): KeysetStart | undefined {
  if (!where || Object.keys(where).length === 0) return null;
  const u = only(where, 'updatedAt');
  if (u !== undefined) {
    const gte = instantOf(only(u, 'greater_than_equal'));
    if (gte !== undefined) return { t: gte, id: '', after: false };
    const gt = instantOf(only(u, 'greater_than'));
    if (gt !== undefined) return { t: gt, id: '\uffff', after: true };
    return undefined;
  }
  const or = listOf(only(where, 'or'));
  if (or?.length !== 2) return undefined;
  const gtRaw = only(only(or[0], 'updatedAt'), 'greater_than');
  const and = listOf(only(or[1], 'and'));
  if (gtRaw === undefined || !and || and.length !== 2) return undefined;
  const eqRaw = only(only(and[0], 'updatedAt'), 'equals');
  const idRaw = only(only(and[1], keyField), 'greater_than') ?? only(only(and[1], 'id'), 'greater_than');
  const gt = instantOf(gtRaw);
  if (gt === undefined || gt !== instantOf(eqRaw) || typeof idRaw !== 'string') return undefined;
  return { t: gt, id: idRaw, after: true };
}

/** The keyset index's answer to a list request, when the request is keyset paging: O(log n) to find the start. */
function fromKeyset(c: CollectionSlug, t: TenantData, params: SimParams): Window<KeyEntry> | undefined {
  if (!KEYSET_SORTS.has((params.sort ?? '').replace(/\s/g, ''))) return undefined;
  const start = keysetStart(params.where, c === 'media' ? 'filename' : 'id');
  if (start === undefined) return undefined;
  const entries = t.collections[c].keyset(params.draft);
  if (start === null) return entries;
  // Range operators never match a null updatedAt (Infinity here): the matches end where those begin.
  const from = lowerBound(entries, start, start.after);
  const end = lowerBound(entries, { t: Number.POSITIVE_INFINITY, id: '' });
  return new Slice(entries, from, Math.max(from, end));
}

interface Window<T> {
  readonly length: number;
  slice(a?: number, b?: number): T[];
}

/** A read-only window on an array, so a keyset page never copies the index. */
class Slice<T> implements Window<T> {
  constructor(
    private readonly items: readonly T[],
    private readonly from: number,
    private readonly to: number,
  ) {}
  get length(): number {
    return this.to - this.from;
  }
  slice(a = 0, b = this.length): T[] {
    return this.items.slice(this.from + Math.max(0, a), this.from + Math.min(this.length, b));
  }
}

type Matches = { readonly length: number; slice(a?: number, b?: number): readonly StoredRecord[] };

/**
 * One list page in the spec's envelope, as Payload 3's database adapters compute it: a page past the end answers
 * `totalDocs 0, totalPages 0, page 1, pagingCounter 0`, a page 1 matching nothing the same with `pagingCounter 1`; `limit=0` and `pagination=false` answer every
 * match with `totalPages 1`; `pagination=false` with `limit` and `page` still applies both.
 */
export function listDocs(c: CollectionSlug, ctx: ShapeCtx): JsonObject {
  const { params, tenant } = ctx;
  const keyed = fromKeyset(c, tenant, params);
  const matched: Matches = keyed
    ? {
        length: keyed.length,
        slice: (a, b) => keyed.slice(a, b).map((e) => e.rec),
      }
    : matchingRecords(c, tenant, params);
  const shape = (recs: readonly StoredRecord[]): JsonObject[] =>
    recs.map((r) => shapeDoc(c, viewOf(r, params.draft), ctx, params.depth));
  const { offset, limit } = pageWindow(params.limit, params.page);
  const docs = limit === null ? matched.slice() : matched.slice(offset, offset + limit);
  // Payload counts nothing when it pages nothing: the envelope takes totalDocs from what came back then.
  return pageEnvelope(shape(docs), matched.length, params);
}

export const notFound = (): SimHttpError => new SimHttpError(404, 'Not Found');

/** One record by id (media: by filename); a never-published record is not found by a published read. */
export function getDoc(c: CollectionSlug, id: string, ctx: ShapeCtx): JsonObject {
  const rec = ctx.tenant.collections[c].byId.get(id);
  const view = rec ? visibleView(c, rec, ctx.params.draft) : undefined;
  if (!view) throw notFound();
  return shapeDoc(c, view, ctx, ctx.params.depth);
}
