import { hasCode } from '../errors.js';
import { parseParams, type SimParams } from '../sim/parse-params.js';
import { pageEnvelope, pageWindow } from '../sim/sim-page-envelope.js';
import { isSimHttpError, SimHttpError } from '../sim/sim-query.js';
import type { MirrorReads } from '../store/reads/mirror-reads.js';
import type { CollectionCopies, ReadView } from '../store/reads/read-spec.js';
import { type CollectionSlug, isCollectionSlug } from '../vocabulary/collections.js';
import { stringifyJson } from '../vocabulary/exact-json.js';
import type { JsonObject } from '../vocabulary/ids.js';
import type { KeptAnswers } from './kept-answers.js';
import { type ReadAnswer, readProblem } from './read-answer.js';
import { computedFields, copyFor, type ReadWants } from './read-copy.js';
import { freshnessHeaders, notModified } from './read-headers.js';
import {
  filterOf,
  type RelatedFields,
  sortOf,
  WHERE_MAX_CONDITIONS,
  WHERE_MAX_DEPTH,
  whereConditions,
  whereDepth,
} from './read-query.js';
import { parseDoc, type ShapeCtx, shapeDocs, stopIfGone } from './shape-docs.js';

/** One read of the upstream's shape: a list (`id` null) or one record (media: by filename). */
export interface ReadRequest {
  readonly tenant: string;
  readonly collection: string;
  readonly id: string | null;
  /** The raw query string, without `?`. */
  readonly query: string;
  readonly ifNoneMatch?: string | undefined;
  /** Whether the client has gone away: no further statement is started then. */
  readonly gone?: () => boolean;
}

export interface ReadDeps {
  readonly reads: MirrorReads;
  /** The cap on `limit` (and on what `limit=0` or `pagination=false` give). */
  readonly maxLimit: number;
  /** Answers kept while the mirror's change mark holds (none kept without). */
  readonly kept?: KeptAnswers;
}

/** Payload's default order when no `sort` is given. */
const DEFAULT_SORT = '-createdAt';
const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };

const upstreamError = (err: SimHttpError): ReadAnswer => ({
  status: err.status,
  headers: JSON_TYPE,
  body: stringifyJson(err.body()),
});

/** The copies of each collection a read needs, asked once per read; `expect` asks for several in one go. */
function copiesOf(deps: ReadDeps, tenant: string) {
  const seen = new Map<CollectionSlug, Promise<CollectionCopies>>();
  return {
    of(c: CollectionSlug): Promise<CollectionCopies> {
      const known = seen.get(c);
      if (known) return known;
      const p = deps.reads.copies(tenant, c);
      seen.set(c, p);
      return p;
    },
    expect(cs: readonly CollectionSlug[]): void {
      const unknown = [...new Set(cs)].filter((c) => !seen.has(c));
      if (unknown.length < 2) return;
      const all = deps.reads.copiesOfMany(tenant, unknown);
      for (const c of unknown) {
        const p = all.then((m) => m.get(c) as CollectionCopies);
        p.catch(() => undefined); // a failure reaches whoever asks for this copy; none asked is nobody's
        seen.set(c, p);
      }
    },
  };
}

/**
 * The answer to one read, from the mirror alone; a failure of the mirror other than a time limit is thrown. Kept
 * answers (`deps.kept`) are given again while the mirror's change mark holds; `If-None-Match` is judged here, on
 * every read, kept or not.
 */
export async function answerRead(deps: ReadDeps, req: ReadRequest): Promise<ReadAnswer> {
  const mark = deps.kept ? deps.reads.changeMark() : null;
  if (!deps.kept || mark === null) return judged(await answerAfresh(deps, req, null), req.ifNoneMatch);
  const key = `${req.tenant}\u0000${req.collection}\u0000${req.id ?? ''}\u0000${req.query}`;
  const kept = deps.kept.get(mark, key);
  if (kept) return judged(kept, req.ifNoneMatch);
  // The mark was read before any statement of this answer, so the answer holds the mirror as of that mark or later;
  // a later state has moved the mark, and whoever asks next, under the new mark, finds nothing kept.
  const fresh = await answerAfresh(deps, req, mark);
  deps.kept.set(mark, key, fresh);
  return judged(fresh, req.ifNoneMatch);
}

/** `answer` as a 304 (its headers, no body) when `If-None-Match` names its ETag. */
const judged = (answer: ReadAnswer, ifNoneMatch: string | undefined): ReadAnswer =>
  answer.status === 200 && notModified(ifNoneMatch, answer.headers.etag)
    ? { ...answer, status: 304, body: null }
    : answer;

/** The answer read from the mirror; `mark`: the change mark read just before (null: none read). */
async function answerAfresh(deps: ReadDeps, req: ReadRequest, mark: string | null): Promise<ReadAnswer> {
  try {
    return await answer(deps, req, mark);
  } catch (err) {
    if (isSimHttpError(err)) return upstreamError(err);
    if (hasCode(err, 'US_TIMEOUT')) return readProblem(503, err.code, err.message);
    throw err;
  }
}

async function answer(deps: ReadDeps, req: ReadRequest, mark: string | null): Promise<ReadAnswer> {
  const c = req.collection;
  if (!isCollectionSlug(c)) throw new SimHttpError(404, 'Route Not Found');
  const params = parseParams(req.query, { maxLimit: deps.maxLimit });
  const refused = whereRefused(params);
  if (refused) return readProblem(400, 'US_USAGE', refused);
  // Where the engine cannot keep the copies exactly (PostgreSQL), the read starts from those last seen and its own
  // statement confirms them: one round trip instead of two. Else (or before any read) they are read first.
  const guess = deps.reads.seenCopies(req.tenant, c);
  const first = await answerFrom(
    deps,
    req,
    c,
    params,
    guess ?? (await deps.reads.copies(req.tenant, c, mark)),
    guess !== null,
  );
  if (guess === null) return first.answer;
  const saw = first.saw ?? (await deps.reads.copies(req.tenant, c));
  if (sameCopies(saw, guess)) return first.answer;
  // The copies moved since they were last seen (a sync's pass, a probe): answer again from those the mirror holds.
  return (await answerFrom(deps, req, c, params, saw, false)).answer;
}

const sameCopies = (a: CollectionCopies, b: CollectionCopies): boolean =>
  a.probedAt === b.probedAt &&
  a.variants.size === b.variants.size &&
  [...a.variants].every(([k, v]) => b.variants.has(k) && b.variants.get(k) === v);

/**
 * The answer given `copies` of the collection; with `verify`, its statement also tells the copies it saw (`saw`;
 * null when it cannot: no row, or no statement made).
 */
async function answerFrom(
  deps: ReadDeps,
  req: ReadRequest,
  c: CollectionSlug,
  params: SimParams,
  copies: CollectionCopies,
  verify: boolean,
): Promise<{ answer: ReadAnswer; saw: CollectionCopies | null }> {
  if ((copies.variants.get('published') ?? null) === null)
    return {
      saw: null,
      answer: readProblem(
        503,
        'US_NOT_SYNCED',
        `${req.tenant}/${c} has never been synced into the mirror: run \`understudy sync\` for it`,
      ),
    };
  const wants: ReadWants = { draft: params.draft, locale: params.locale, fallback: params.fallbackLocale };
  const chosen = copyFor(req.tenant, c, wants, copies);
  if ('missing' in chosen)
    return {
      saw: null,
      answer: readProblem(
        503,
        'US_NOT_SYNCED',
        `${req.tenant}/${c}: the mirror holds no ${chosen.missing} copy for this read (config \`drafts\`, \`locales\`)`,
      ),
    };
  const copiesFor = copiesOf(deps, req.tenant);
  const ctx: ShapeCtx = {
    reads: deps.reads,
    tenant: req.tenant,
    params,
    gone: req.gone ?? (() => false),
    viewOf: async (to) => {
      const got = copyFor(req.tenant, to, wants, to === c ? copies : await copiesFor.of(to));
      return 'view' in got ? got.view : null;
    },
    expectViews: (cs) => copiesFor.expect(cs.filter((x) => x !== c)),
  };
  const { body, saw } =
    req.id === null
      ? await listBody(deps, ctx, chosen.view, params, verify)
      : await oneBody(ctx, chosen.view, req.id, verify);
  // No such record: the upstream's 404, with the copies the statement saw (a read on a guess confirms them).
  if (body === null) return { saw, answer: upstreamError(new SimHttpError(404, 'Not Found')) };
  const text = stringifyJson(body);
  const docs = req.id === null ? (body.docs as JsonObject[]) : [body];
  const headers: Record<string, string> = {
    ...JSON_TYPE,
    ...freshnessHeaders(text, docs, saw ?? copies, chosen.view.variant),
  };
  return { saw, answer: { status: 200, headers, body: text } };
}

/** Why a `where` is refused before it is read (too deep, too many conditions), or null. */
function whereRefused(params: SimParams): string | null {
  const depth = whereDepth(params.where);
  if (depth > WHERE_MAX_DEPTH) return `where is nested ${depth} levels deep; at most ${WHERE_MAX_DEPTH} are read`;
  const n = whereConditions(params.where);
  if (n > WHERE_MAX_CONDITIONS) return `where holds ${n} conditions; at most ${WHERE_MAX_CONDITIONS} are read`;
  return null;
}

async function oneBody(
  ctx: ShapeCtx,
  view: ReadView,
  id: string,
  verify: boolean,
): Promise<{ body: JsonObject | null; saw: CollectionCopies | null }> {
  const { doc: row, copies: saw } = verify
    ? await ctx.reads.byKey(view, id)
    : { doc: (await ctx.reads.byKeys(view, [id])).get(id) ?? null, copies: null };
  if (row === null) return { body: null, saw };
  const [doc] = await shapeDocs(ctx, view.collection, [parseDoc(row)], ctx.params.depth);
  return { body: doc as JsonObject, saw };
}

/** The fields a `where` or `sort` on `view` may name: those its records hold, the key and the computed ones. */
const knownFields = async (deps: ReadDeps, view: ReadView): Promise<ReadonlySet<string>> =>
  new Set([...(await deps.reads.fieldNames(view)), 'id', ...computedFields(view.collection)]);

async function listBody(
  deps: ReadDeps,
  ctx: ShapeCtx,
  view: ReadView,
  params: SimParams,
  verify: boolean,
): Promise<{ body: JsonObject; saw: CollectionCopies | null }> {
  const c = view.collection;
  const known = await knownFields(deps, view);
  const related = async (to: CollectionSlug): Promise<RelatedFields> => {
    const v = await ctx.viewOf(to);
    return { view: v, known: v ? await knownFields(deps, v) : null };
  };
  const filter =
    params.where && Object.keys(params.where).length > 0 ? await filterOf(params.where, c, { known, related }) : null;
  const sort = sortOf(params.sort ?? DEFAULT_SORT, known);
  const w = pageWindow(params.limit, params.page);
  stopIfGone(ctx.gone);
  const { rows, total, copies } = await deps.reads.list({
    view,
    filter,
    sort,
    offset: w.offset,
    limit: w.limit ?? deps.maxLimit,
    count: params.pagination && params.limit !== 0,
    withCopies: verify,
  });
  const docs = await shapeDocs(
    ctx,
    c,
    rows.map((r) => parseDoc(r.doc)),
    params.depth,
  );
  return { body: pageEnvelope(docs, total, params), saw: copies };
}
