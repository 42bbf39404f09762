import type { Hono } from 'hono';
import { listFailedWrites, retryWrite, showWrite, type WriteDetails } from '../queue/failed-writes.js';
import { waitForWriteState } from '../queue/follow-write.js';
import { durationSeconds } from '../vocabulary/duration.js';
import { isWriteWaitTimeout } from '../writes/write-state.js';
import { ServeProblem } from './problem.js';
import { allow, type ServeContext, type ServeEnv } from './serve-context.js';
import { reaches } from './serve-tokens.js';
import { MAX_WAIT_S, mirroredRecord } from './write-routes.js';

/** `?wait=30s` (a duration, at most 60 s) in ms; null when absent. */
function waitMs(text: string | undefined): number | null {
  if (text === undefined) return null;
  const s = durationSeconds(text);
  if (s === null || s < 0)
    throw new ServeProblem(400, 'US_VALIDATION', `wait=${text}: a duration such as 30s (at most ${MAX_WAIT_S}s)`);
  return Math.min(MAX_WAIT_S, s) * 1000;
}

/** A write's details and, once it ended `ok`, the record it left in the mirror (`record`, null when none). */
async function withRecord(ctx: ServeContext, d: WriteDetails) {
  const draft = (d.data as { draft?: unknown } | null)?.draft === true;
  return { ...d, record: await mirroredRecord(ctx, d, draft) };
}

/** The token may see a write of `tenant` with `read` or `write`. */
const scopeFor = (scopes: readonly string[]) => (scopes.includes('write') ? 'write' : 'read');

/** `/v1/writes`: a write's state (long-polled with `?wait=`), the failed writes, and a retry. */
export function mountWritesApi(app: Hono<ServeEnv>, ctx: ServeContext): void {
  app.get('/v1/writes/:id', async (c) => {
    const id = c.req.param('id');
    const wait = waitMs(c.req.query('wait'));
    const log = (await ctx.mirror())?.writeLog ?? null;
    // The tenant first (a token sees only its tenants' writes), then the wait.
    const first = await showWrite(ctx.queue, log, id);
    allow(c, ctx, scopeFor(c.get('token').scopes), first.tenant ?? '');
    if (wait !== null && !first.done) {
      try {
        const signal = AbortSignal.any([c.req.raw.signal, ctx.stopping]);
        await waitForWriteState(ctx.queue, id, { timeoutMs: wait, signal }, log);
      } catch (err) {
        if (!isWriteWaitTimeout(err) && !ctx.stopping.aborted && !c.req.raw.signal.aborted) throw err;
      }
      return c.json(await withRecord(ctx, await showWrite(ctx.queue, log, id)));
    }
    return c.json(await withRecord(ctx, first));
  });

  app.get('/v1/writes', async (c) => {
    const token = c.get('token');
    allow(c, ctx, scopeFor(token.scopes));
    const state = c.req.query('state') ?? 'failed';
    if (state !== 'failed')
      throw new ServeProblem(
        400,
        'US_VALIDATION',
        `state=${state}: only state=failed is listed (GET /v1/writes/{id} for one write)`,
      );
    const tenant = c.req.query('tenant');
    if (tenant !== undefined) allow(c, ctx, scopeFor(token.scopes), tenant);
    const failed = await listFailedWrites(ctx.queue, (await ctx.mirror())?.writeLog ?? null);
    return c.json(failed.filter((f) => reaches(token, f.tenant) && (tenant === undefined || f.tenant === tenant)));
  });

  app.post('/v1/writes/:id/retry', async (c) => {
    const id = c.req.param('id');
    const seen = await showWrite(ctx.queue, null, id);
    allow(c, ctx, 'write', seen.tenant ?? '');
    const resend = c.req.query('resend') === 'true';
    const result = await retryWrite(ctx.queue, ctx.order, await ctx.writableWriteLog(), id, resend ? { resend } : {});
    ctx.log.info({ tokenName: c.get('token').name, job: id, how: result.how }, 'write retried');
    return c.json(result);
  });
}
