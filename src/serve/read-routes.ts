import type { HttpBindings } from '@hono/node-server';
import type { Context, Hono } from 'hono';
import { DEFAULT_MAX_LIMIT } from '../config/config-schema.js';
import { answerRead, type ReadDeps } from '../reads/answer-read.js';
import { KeptAnswers } from '../reads/kept-answers.js';
import type { MirrorReads } from '../store/reads/mirror-reads.js';
import { API_VERSION } from '../vocabulary/collections.js';
import { ServeProblem } from './problem.js';
import { allow, authenticate, requestHeader, type ServeContext, type ServeEnv, takeLimits } from './serve-context.js';

/** The mirror's reads, opened on first use; null while there is no mirror yet. */
export type ReadsOpener = () => Promise<MirrorReads | null>;

/**
 * Whether the request's client has gone: its Node response closed before it was answered. The web Request's signal
 * says the same but costs building that Request on every read (and says it only if built before the close), so it is
 * the fallback where no Node response is bound (a test's `app.request`).
 */
function goneOf(c: Context<ServeEnv>): () => boolean {
  const out = (c.env as Partial<HttpBindings> | undefined)?.outgoing;
  return out ? () => out.destroyed && !out.writableFinished : () => c.req.raw.signal.aborted;
}

/** The answers kept for each mirror connection (a change mark means something only to the connection it is of). */
const KEPT = new WeakMap<MirrorReads, KeptAnswers>();
function keptFor(mirror: MirrorReads): KeptAnswers {
  let kept = KEPT.get(mirror);
  if (!kept) {
    kept = new KeptAnswers();
    KEPT.set(mirror, kept);
  }
  return kept;
}

/** Answers one upstream read (scope `read`) from the mirror, as the upstream answers it. */
async function takeRead(c: Context<ServeEnv>, ctx: ServeContext, reads: ReadsOpener, id: string | null) {
  const { version, tenant, collection } = c.req.param() as { version: string; tenant: string; collection: string };
  if (version !== API_VERSION)
    throw new ServeProblem(404, 'US_NOT_FOUND', `unknown API version ${version} (serve speaks ${API_VERSION})`);
  allow(c, ctx, 'read', tenant);
  const config = ctx.config();
  if (!config.tenants.some((t) => t.slug === tenant))
    throw new ServeProblem(404, 'US_NOT_FOUND', `tenant ${tenant} is not in the config`);
  const mirror = await reads();
  if (!mirror)
    throw new ServeProblem(503, 'US_NOT_SYNCED', 'there is no mirror yet: run `understudy sync` first', {
      'retry-after': '5',
    });
  const deps: ReadDeps = { reads: mirror, maxLimit: config.api?.maxLimit ?? DEFAULT_MAX_LIMIT, kept: keptFor(mirror) };
  const url = c.req.url;
  const q = url.indexOf('?');
  const a = await answerRead(deps, {
    tenant,
    collection,
    id,
    query: q < 0 ? '' : url.slice(q + 1),
    ifNoneMatch: requestHeader(c, 'if-none-match'),
    gone: goneOf(c),
  });
  return new Response(a.body, {
    status: a.status,
    headers: { 'cache-control': 'no-cache', ...a.headers, ...takeLimits(c) },
  });
}

/**
 * The upstream's reads at its own paths (`GET /partners/2026-02/{tenant}/{collection}[/{id}]`, scope `read`),
 * answered from the mirror (docs/api.md, Reads): mounted with their own authentication, as routes of another part.
 */
export const mountReadRoutes =
  (reads: ReadsOpener) =>
  (app: Hono<ServeEnv>, ctx: ServeContext): void => {
    const base = '/partners/:version/:tenant/:collection';
    const guard = authenticate(ctx);
    app.get(base, guard, (c) => takeRead(c, ctx, reads, null));
    app.get(`${base}/:id`, guard, (c) => takeRead(c, ctx, reads, c.req.param('id')));
  };
