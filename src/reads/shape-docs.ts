import { UnderstudyError } from '../errors.js';
import type { SimParams } from '../sim/parse-params.js';
import { applySelect, isLocaleObject, type LocaleCtx, resolveLocale } from '../sim/sim-query.js';
import { JOINS, LOCALIZED, RELATIONSHIPS } from '../sim/sim-schema.js';
import type { MirrorReads } from '../store/reads/mirror-reads.js';
import type { ReadView } from '../store/reads/read-spec.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import { parseExactJson } from '../vocabulary/exact-json.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../vocabulary/ids.js';
import { computedFields } from './read-copy.js';

/** What shaping a read's records needs: the mirror, the read's parameters, and the copy of each collection. */
export interface ShapeCtx {
  readonly reads: MirrorReads;
  readonly tenant: string;
  readonly params: SimParams;
  /** Whether the client has gone away: no further statement is started then. */
  readonly gone: () => boolean;
  /** The copy a populated record of `c` is read from, or null when the mirror has none (its id stays). */
  viewOf(c: CollectionSlug): Promise<ReadView | null>;
  /** Says which collections' copies are about to be asked for, so that they are asked for together. */
  expectViews(cs: readonly CollectionSlug[]): void;
}

const DEFAULT_JOIN_LIMIT = 10;
/** Payload's default `maxDepth` of a join: populated on the requested record only, its records at depth 1. */
const JOIN_MAX_DEPTH = 1;

const joinLimit = (params: SimParams, field: string): number => {
  const j = params.joins ? params.joins[field] : undefined;
  return isJsonObject(j) && typeof j.limit === 'string' && /^\d+$/.test(j.limit) ? Number(j.limit) : DEFAULT_JOIN_LIMIT;
};

/** Throws `US_ABORTED` once the client has gone: what is left of the read is not worth a statement. */
export function stopIfGone(gone: () => boolean): void {
  if (gone()) throw new UnderstudyError('US_ABORTED', 'the client went away before the read was answered');
}

export const parseDoc = (text: string): JsonObject => {
  const v = parseExactJson(text);
  return isJsonObject(v) ? v : {};
};

/** A stored record with its localized fields resolved and its joins (stored as of its last sync) left out. */
function ownFields(c: CollectionSlug, stored: JsonObject, lc: LocaleCtx): JsonObject {
  const computed = computedFields(c);
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(stored)) {
    if (computed.has(k)) continue;
    out[k] = LOCALIZED.has(k) && isLocaleObject(v) ? resolveLocale(v, lc) : v;
  }
  return out;
}

/** The related records of `to` with these ids, shaped one level down, by id (one that cannot be read is absent). */
async function related(
  ctx: ShapeCtx,
  to: CollectionSlug,
  ids: readonly string[],
  depth: number,
  level: number,
): Promise<ReadonlyMap<string, JsonObject>> {
  const view = ids.length ? await ctx.viewOf(to) : null;
  if (!view) return new Map();
  stopIfGone(ctx.gone);
  const rows = await ctx.reads.byKeys(view, [...new Set(ids)]);
  const keys = [...rows.keys()];
  const shaped = await shapeDocs(
    ctx,
    to,
    keys.map((k) => parseDoc(rows.get(k) as string)),
    depth,
    level,
  );
  const sel = ctx.params.populate?.[to];
  return new Map(
    keys.map((k, i) => [
      k,
      isJsonObject(sel) ? applySelect(shaped[i] as JsonObject, sel, to !== 'media') : (shaped[i] as JsonObject),
    ]),
  );
}

const idsIn = (v: JsonValue | undefined): string[] =>
  (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string');

/** Populates the relationships of `docs` (level <= depth), from the mirror's own rows, as the upstream does. */
async function populateRelationships(
  ctx: ShapeCtx,
  c: CollectionSlug,
  docs: JsonObject[],
  depth: number,
  level: number,
) {
  for (const rel of RELATIONSHIPS[c]) {
    const found = await related(
      ctx,
      rel.to,
      docs.flatMap((d) => idsIn(d[rel.field])),
      depth,
      level + 1,
    );
    const one = (x: JsonValue): JsonValue => (typeof x === 'string' ? (found.get(x) ?? x) : x);
    for (const d of docs) {
      const v = d[rel.field];
      if (v === undefined || v === null) continue;
      d[rel.field] = Array.isArray(v) ? v.map(one) : one(v);
    }
  }
}

/** Adds each join: the records pointing at each doc, newest created first, populated while level <= min(depth, 1). */
async function addJoins(
  ctx: ShapeCtx,
  c: CollectionSlug,
  docs: JsonObject[],
  ids: string[],
  depth: number,
  level: number,
) {
  const joinDepth = Math.min(depth, JOIN_MAX_DEPTH);
  for (const j of JOINS[c]) {
    const limit = joinLimit(ctx.params, j.field);
    const pointing = await ctx.reads.pointingAt(ctx.tenant, j.from, j.on, ids, limit === 0 ? null : limit + 1);
    const pages = ids.map((id) => {
      const all = pointing.get(id) ?? [];
      return { page: limit === 0 ? all : all.slice(0, limit), more: limit !== 0 && all.length > limit };
    });
    const found =
      level <= joinDepth
        ? await related(
            ctx,
            j.from,
            pages.flatMap((p) => p.page),
            joinDepth,
            level + 1,
          )
        : new Map<string, JsonObject>();
    docs.forEach((d, i) => {
      const p = pages[i] as { page: string[]; more: boolean };
      d[j.field] = { docs: p.page.map((x) => found.get(x) ?? x), hasNextPage: p.more };
    });
  }
}

/**
 * Records as the upstream answers them (its `afterRead`): locale resolved, relationships populated while
 * `level <= depth` (the record itself is level 1), joins computed from the mirror's rows, `select` applied.
 */
export async function shapeDocs(
  ctx: ShapeCtx,
  c: CollectionSlug,
  stored: readonly JsonObject[],
  depth: number,
  level = 1,
): Promise<JsonObject[]> {
  const { params } = ctx;
  const lc: LocaleCtx = { locale: params.locale, fallback: params.fallbackLocale };
  const ids = stored.map((s) => String(s.id));
  const docs = stored.map((s) => ownFields(c, s, lc));
  const populates = level <= depth;
  const joins = params.joins !== false;
  if (docs.length > 0)
    ctx.expectViews([
      ...(populates ? RELATIONSHIPS[c].map((r) => r.to) : []),
      ...(joins && level <= Math.min(depth, JOIN_MAX_DEPTH) ? JOINS[c].map((j) => j.from) : []),
    ]);
  if (populates) {
    // The populated tenant: the mirror holds its slug only, not the display name the upstream adds.
    for (const d of docs) if (d.tenant === ctx.tenant) d.tenant = { id: ctx.tenant, slug: ctx.tenant };
    await populateRelationships(ctx, c, docs, depth, level);
  }
  if (params.joins !== false) {
    await addJoins(ctx, c, docs, ids, depth, level);
    for (const d of docs) for (const f of computedFields(c)) if (!(f in d)) d[f] = { docs: [], hasNextPage: false };
  }
  if (c === 'media') for (const d of docs) delete d.id;
  return params.select && level === 1
    ? docs.map((d) => applySelect(d, params.select as JsonObject, c !== 'media'))
    : docs;
}
