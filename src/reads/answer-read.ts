import { hasCode } from '../errors.js';
import { parseParams, type SimParams } from '../sim/parse-params.js';
import { pageEnvelope, pageWindow } from '../sim/sim-page-envelope.js';
import { isSimHttpError, SimHttpError } from '../sim/sim-query.js';
import type { CollectionCopies, MirrorReads } from '../store/reads/mirror-reads.js';
import type { ReadView } from '../store/reads/read-spec.js';
import { type CollectionSlug, isCollectionSlug } from '../vocabulary/collections.js';
import { stringifyJson } from '../vocabulary/exact-json.js';
import type { JsonObject } from '../vocabulary/ids.js';
import { type ReadAnswer, readProblem } from './read-answer.js';
import { computedFields, copyFor, type ReadWants } from './read-copy.js';
import { freshnessHeaders, notModified } from './read-headers.js';
import { filterOf, sortOf, WHERE_MAX_CONDITIONS, WHERE_MAX_DEPTH, whereConditions, whereDepth } from './read-query.js';
import { parseDoc, type ShapeCtx, shapeDocs, stopIfGone } from './shape-docs.js';

/** One read of the upstream's shape: a list (`id` null) or one record (media: by filename). */
export interface ReadRequest {
  readonly tenant: string;
  readonly collection: string;
  readonly id: string | null;
  /** The raw query string, without `?`. */
  readonly query: string;
  readonly ifNoneMatch?: string | undefined;
  /** Aborted when the client goes away: no further statement is started. */
  readonly signal?: AbortSignal;
}

export interface ReadDeps {
  readonly reads: MirrorReads;
  /** The cap on `limit` (and on what `limit=0` or `pagination=false` give). */
  readonly maxLimit: number;
}

/** Payload's default order when no `sort` is given. */
const DEFAULT_SORT = '-createdAt';
const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };

const upstreamError = (err: SimHttpError): ReadAnswer => ({
  status: err.status,
  headers: JSON_TYPE,
  body: stringifyJson(err.body()),
});

/** The copy of each collection a read needs, asked once per read. */
function copiesOf(deps: ReadDeps, tenant: string) {
  const seen = new Map<CollectionSlug, Promise<CollectionCopies>>();
  return (c: CollectionSlug): Promise<CollectionCopies> => {
    const known = seen.get(c);
    if (known) return known;
    const p = deps.reads.copies(tenant, c);
    seen.set(c, p);
    return p;
  };
}

/** The answer to one read, from the mirror alone; a failure of the mirror other than a time limit is thrown. */
export async function answerRead(deps: ReadDeps, req: ReadRequest): Promise<ReadAnswer> {
  try {
    return await answer(deps, req);
  } catch (err) {
    if (isSimHttpError(err)) return upstreamError(err);
    if (hasCode(err, 'US_TIMEOUT')) return readProblem(503, err.code, err.message);
    throw err;
  }
}

async function answer(deps: ReadDeps, req: ReadRequest): Promise<ReadAnswer> {
  const c = req.collection;
  if (!isCollectionSlug(c)) throw new SimHttpError(404, 'Route Not Found');
  const params = parseParams(req.query, { maxLimit: deps.maxLimit });
  const refused = whereRefused(params);
  if (refused) return readProblem(400, 'US_USAGE', refused);
  const copiesFor = copiesOf(deps, req.tenant);
  const copies = await copiesFor(c);
  if ((copies.variants.get('published') ?? null) === null)
    return readProblem(
      503,
      'US_NOT_SYNCED',
      `${req.tenant}/${c} has never been synced into the mirror: run \`understudy sync\` for it`,
    );
  const wants: ReadWants = { draft: params.draft, locale: params.locale, fallback: params.fallbackLocale };
  const chosen = copyFor(req.tenant, c, wants, copies);
  if ('missing' in chosen)
    return readProblem(
      503,
      'US_NOT_SYNCED',
      `${req.tenant}/${c}: the mirror holds no ${chosen.missing} copy for this read (config \`drafts\`, \`locales\`)`,
    );
  const ctx: ShapeCtx = {
    reads: deps.reads,
    tenant: req.tenant,
    params,
    signal: req.signal,
    viewOf: async (to) => {
      const got = copyFor(req.tenant, to, wants, await copiesFor(to));
      return 'view' in got ? got.view : null;
    },
  };
  const body =
    req.id === null ? await listBody(deps, ctx, chosen.view, params) : await oneBody(ctx, chosen.view, req.id);
  const text = stringifyJson(body);
  const docs = req.id === null ? (body.docs as JsonObject[]) : [body];
  const headers: Record<string, string> = {
    ...JSON_TYPE,
    ...freshnessHeaders(text, docs, copies, chosen.view.variant),
  };
  if (notModified(req.ifNoneMatch, headers.etag)) return { status: 304, headers, body: null };
  return { status: 200, headers, body: text };
}

/** Why a `where` is refused before it is read (too deep, too many conditions), or null. */
function whereRefused(params: SimParams): string | null {
  const depth = whereDepth(params.where);
  if (depth > WHERE_MAX_DEPTH) return `where is nested ${depth} levels deep; at most ${WHERE_MAX_DEPTH} are read`;
  const n = whereConditions(params.where);
  if (n > WHERE_MAX_CONDITIONS) return `where holds ${n} conditions; at most ${WHERE_MAX_CONDITIONS} are read`;
  return null;
}

async function oneBody(ctx: ShapeCtx, view: ReadView, id: string): Promise<JsonObject> {
  const row = (await ctx.reads.byKeys(view, [id])).get(id);
  if (row === undefined) throw new SimHttpError(404, 'Not Found');
  const [doc] = await shapeDocs(ctx, view.collection, [parseDoc(row)], ctx.params.depth);
  return doc as JsonObject;
}

async function listBody(deps: ReadDeps, ctx: ShapeCtx, view: ReadView, params: SimParams): Promise<JsonObject> {
  const c = view.collection;
  const known = new Set([...(await deps.reads.fieldNames(view)), 'id', ...computedFields(c)]);
  const filter = params.where && Object.keys(params.where).length > 0 ? filterOf(params.where, c, known) : null;
  const sort = sortOf(params.sort ?? DEFAULT_SORT, known);
  const w = pageWindow(params.limit, params.page);
  stopIfGone(ctx.signal);
  const { rows, total } = await deps.reads.list({
    view,
    filter,
    sort,
    offset: w.offset,
    limit: w.limit ?? deps.maxLimit,
    count: params.pagination && params.limit !== 0,
  });
  const docs = await shapeDocs(
    ctx,
    c,
    rows.map((r) => parseDoc(r.doc)),
    params.depth,
  );
  return pageEnvelope(docs, total, params);
}
