import type { Context, Hono } from 'hono';
import { API_VERSION, BULK_ROUTES, type CollectionSlug, collectionNamed } from '../vocabulary/collections.js';
import { type JsonObject, tenantSlug } from '../vocabulary/ids.js';
import { parseWriteBody, type WriteRequest } from '../writes/validate-write.js';
import { WRITABLE, type WriteOp } from '../writes/write-job.js';
import { isWriteWaitTimeout, type WriteState } from '../writes/write-state.js';
import { ServeProblem } from './problem.js';
import { allow, requestHeader, type ServeContext, type ServeEnv } from './serve-context.js';

/** Longest `Prefer: wait=N` honoured, in seconds. */
export const MAX_WAIT_S = 60;

/** The answer to a write taken: `{ id, state, links }`, as 202 (queued) or 200 (an Idempotency-Key seen before). */
export const acceptedBody = (id: string, state: string) => ({ id, state, links: { self: `/v1/writes/${id}` } });

const OPS_OF_METHOD: Readonly<Record<string, WriteRequest['op']>> = {
  POST: 'create',
  PUT: 'put',
  PATCH: 'patch',
  DELETE: 'delete',
};

/** The op a route's method means on a collection; `put` and `patch` are both an update. */
const opOf = (method: string): WriteOp | null => {
  const op = OPS_OF_METHOD[method];
  return op === undefined ? null : op === 'put' || op === 'patch' ? 'update' : op;
};

/** The methods a path takes (for a 405's `Allow`): a collection's routes with an id, or without. */
function allowedMethods(collection: CollectionSlug, withId: boolean): string[] {
  // Every collection is read at both paths (the mirror, issue 36).
  const out: string[] = ['GET'];
  for (const [method, op] of Object.entries(OPS_OF_METHOD)) {
    const o = op === 'put' || op === 'patch' ? 'update' : op;
    if (WRITABLE[o as WriteOp].includes(collection) && (o === 'create') !== withId) out.push(method);
  }
  return out;
}

/** The write a request at an upstream path asks for: its route read from the method and the path. */
function requestOf(c: Context<ServeEnv>, rest: readonly string[]): Omit<WriteRequest, 'body'> {
  const { tenant, collection: name } = c.req.param() as { tenant: string; collection: string };
  const method = c.req.method;
  const collection = collectionNamed(name);
  if (!collection) throw new ServeProblem(404, 'US_NOT_FOUND', `unknown collection "${name}"`);
  const bulk =
    rest.length === 1 &&
    method === 'PATCH' &&
    BULK_ROUTES.some((r) => r.collection === collection && r.kind === rest[0]);
  const op = bulk ? 'bulk' : opOf(method);
  const withId = rest.length === 1;
  if (op === null || !WRITABLE[op].includes(collection) || (op === 'create') === withId) {
    const methods = allowedMethods(collection, withId);
    throw new ServeProblem(
      405,
      'US_VALIDATION',
      `the Partners API has no ${method} ${withId ? `/${collection}/{id}` : `/${collection}`} route` +
        (methods.length ? ` (it takes ${methods.join(', ')})` : ''),
      { allow: methods.join(', ') },
    );
  }
  const draft = c.req.query('draft');
  if (draft !== undefined && draft !== 'true' && draft !== 'false')
    throw new ServeProblem(400, 'US_VALIDATION', `draft=${draft}: must be true or false`);
  const key = requestHeader(c, 'idempotency-key');
  return {
    op: bulk ? 'bulk' : (OPS_OF_METHOD[method] as WriteRequest['op']),
    tenant,
    collection,
    ...(withId && !bulk ? { id: rest[0] as string } : {}),
    ...(draft === 'true' ? { draft: true } : {}),
    ...(key !== undefined ? { idempotencyKey: key } : {}),
  };
}

/** `Prefer: wait=N` (RFC 7240): N seconds, at most `MAX_WAIT_S`; null when not asked. */
export function preferredWait(prefer: string | undefined): number | null {
  const m = /(?:^|[,;\s])wait\s*=\s*"?(\d{1,6})"?/i.exec(prefer ?? '');
  return m ? Math.min(MAX_WAIT_S, Number(m[1])) : null;
}

/** The body of a request, exactly (big integers kept): what `enqueue --body` would make of the same text. */
async function bodyOf(c: Context<ServeEnv>): Promise<unknown> {
  const raw = await c.req.text();
  return raw.trim() === '' ? undefined : parseWriteBody(raw);
}

/** The record a write that ended `ok` left in the mirror (its draft for a draft write); null for a bulk write. */
export async function mirroredRecord(ctx: ServeContext, s: WriteState, draft: boolean): Promise<JsonObject | null> {
  const collection = s.collection ? collectionNamed(s.collection) : undefined;
  const id = s.resultId ?? s.recordId;
  if (s.state !== 'ok' || !collection || !id || !s.tenant || s.op === 'bulk') return null;
  const mirror = await ctx.mirror();
  if (!mirror) return null;
  const key = { tenant: tenantSlug(s.tenant), collection, id, deleted: s.op === 'delete' };
  // A draft write leaves its draft; a create of a versioned collection may leave only a draft too (not published).
  const first = await mirror.recordDoc({ ...key, variant: draft ? 'draft' : 'published' });
  return first ?? (!draft && s.op === 'create' ? mirror.recordDoc({ ...key, variant: 'draft' }) : null);
}

/** The upstream's answer to a write that ended, as far as the mirror and the job know it. */
async function outcomeAnswer(ctx: ServeContext, s: WriteState, draft: boolean, headers: Record<string, string>) {
  if (s.state === 'failed') {
    const status = s.error?.status && s.error.status >= 400 && s.error.status < 600 ? s.error.status : 502;
    throw new ServeProblem(status, s.error?.code ?? 'US_UPSTREAM', s.error?.message ?? 'the write failed', headers, {
      id: s.jobId,
      state: s.state,
    });
  }
  const doc = await mirroredRecord(ctx, s, draft);
  const body =
    doc ??
    (s.op === 'bulk' ? { ...s.summary, failures: s.failures ?? [] } : { id: s.resultId ?? s.recordId, state: s.state });
  return new Response(JSON.stringify(body), {
    status: s.op === 'create' ? 201 : 200,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

/** Takes one write at its upstream path: validated as `enqueue` validates, queued, answered or waited for. */
async function takeWrite(c: Context<ServeEnv>, ctx: ServeContext, rest: readonly string[]): Promise<Response> {
  const { version, tenant } = c.req.param() as { version: string; tenant: string };
  if (version !== API_VERSION)
    throw new ServeProblem(404, 'US_NOT_FOUND', `unknown API version ${version} (serve speaks ${API_VERSION})`);
  const token = allow(c, ctx, 'write', tenant);
  if (!ctx.config().tenants.some((t) => t.slug === tenant))
    throw new ServeProblem(404, 'US_NOT_FOUND', `tenant ${tenant} is not in the config`);
  const request = requestOf(c, rest);
  const body = await bodyOf(c);
  const submitted = await ctx.writes.submit({
    ...request,
    ...(body !== undefined ? { body } : {}),
    tokenName: token.name,
  });
  if (!submitted.sameWrite)
    throw new ServeProblem(
      422,
      'US_IDEMPOTENCY_CONFLICT',
      `Idempotency-Key ${request.idempotencyKey} already names write ${submitted.jobId}, a different request: use a new key`,
      {},
      { id: submitted.jobId },
    );
  const location = `/v1/writes/${submitted.jobId}`;
  const wait = submitted.created ? preferredWait(requestHeader(c, 'prefer')) : null;
  if (wait !== null) {
    try {
      const signal = AbortSignal.any([c.req.raw.signal, ctx.stopping]);
      const done = await ctx.writes.waitForWrite(submitted.jobId, { timeoutMs: wait * 1000, signal });
      return await outcomeAnswer(ctx, done, request.draft === true, {
        location,
        'preference-applied': `wait=${wait}`,
      });
    } catch (err) {
      // Out of time, or serve stopping (or the client gone): the write is queued, and the answer says so.
      if (!isWriteWaitTimeout(err) && !ctx.stopping.aborted && !c.req.raw.signal.aborted) throw err;
    }
  }
  // A write just queued is `queued` (waiting, no attempt yet) as it is answered: reading it back would cost two more
  // Redis round trips on every write (docs/benchmarks.md#serve). A key seen before answers the job's current state.
  const state = submitted.created ? { state: 'queued' } : await ctx.writes.getWrite(submitted.jobId);
  ctx.log.info(
    { tokenName: token.name, job: submitted.jobId, created: submitted.created, op: request.op, tenant },
    'write taken',
  );
  return c.json(acceptedBody(submitted.jobId, state.state), submitted.created ? 202 : 200, { location });
}

/** The 16 write routes of the spec at their upstream paths (`/partners/2026-02/{tenant}/{collection}[/{id}]`). */
export function mountWriteRoutes(app: Hono<ServeEnv>, ctx: ServeContext): void {
  const base = '/partners/:version/:tenant/:collection';
  app.on(['POST', 'PUT', 'PATCH', 'DELETE'], base, (c) => takeWrite(c, ctx, []));
  app.on(['POST', 'PUT', 'PATCH', 'DELETE'], `${base}/:id`, (c) => takeWrite(c, ctx, [c.req.param('id')]));
}
