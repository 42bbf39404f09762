import type { Context, Hono } from 'hono';
import { type SSEStreamingApi, streamSSE } from 'hono/streaming';
import type { Change, ChangeFeedReader, ChangeFilter } from '../changes/change-log-port.js';
import { CHANGE_KINDS, DELETE_REASONS } from '../sync/store-port.js';
import { collectionNamed } from '../vocabulary/collections.js';
import { ServeProblem } from './problem.js';
import { allow, requestHeader, type ServeContext, type ServeEnv } from './serve-context.js';

/** How often a stream looks for new changes, and how often it sends a heartbeat comment. */
const POLL_MS = 250;
const HEARTBEAT_MS = 15_000;
/** Rows a JSON answer holds at most, and a stream reads at once. */
const MAX_LIMIT = 10_000;
const CHUNK = 1000;

const list = (c: Context, name: string): string[] =>
  (c.req.queries(name) ?? []).flatMap((v) => v.split(',')).filter((v) => v !== '');

const bad = (detail: string) => new ServeProblem(400, 'US_VALIDATION', detail);

/** A whole number ≥ `min` from a query value or header. */
function count(name: string, text: string | undefined, min: number): number | undefined {
  if (text === undefined || text === '') return undefined;
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < min) throw bad(`${name}=${text}: an integer >= ${min}`);
  return n;
}

/**
 * The filter of a request (`tenant`, `collection`, `kind`, `reason`, as `changes` takes them), narrowed to the
 * token's tenants: a token sees only its tenants' changes.
 */
function filterOf(c: Context<ServeEnv>, ctx: ServeContext): ChangeFilter {
  const token = allow(c, ctx, 'changes');
  const tenants = list(c, 'tenant');
  for (const t of tenants) allow(c, ctx, 'changes', t);
  const collections = list(c, 'collection').map((name) => {
    const hit = collectionNamed(name);
    if (!hit) throw bad(`collection=${name}: not a collection`);
    return hit;
  });
  const kinds = list(c, 'kind');
  for (const k of kinds)
    if (!(CHANGE_KINDS as readonly string[]).includes(k)) throw bad(`kind=${k}: one of ${CHANGE_KINDS.join(', ')}`);
  const reasons = list(c, 'reason');
  for (const r of reasons)
    if (!(DELETE_REASONS as readonly string[]).includes(r))
      throw bad(`reason=${r}: one of ${DELETE_REASONS.join(', ')}`);
  if (reasons.length && kinds.length && !kinds.includes('delete'))
    throw bad('reason selects deletes: kind must then include delete');
  const mine = tenants.length > 0 ? tenants : token.tenants === '*' ? [] : [...token.tenants];
  return {
    ...(mine.length ? { tenants: mine } : {}),
    ...(collections.length ? { collections } : {}),
    ...(kinds.length ? { kinds } : {}),
    ...(reasons.length ? { reasons } : {}),
  };
}

/** The change log; 503 naming it until the mirror exists. */
async function feedOf(ctx: ServeContext): Promise<ChangeFeedReader> {
  const mirror = await ctx.mirror();
  if (!mirror)
    throw new ServeProblem(503, 'US_STORE', 'the mirror does not exist yet: run a sync first', { 'retry-after': '30' });
  return mirror.changes;
}

/** 410 when changes after `since` were pruned (config changes.retainDays): the client cannot resume from there. */
async function assertKept(feed: ChangeFeedReader, since: number): Promise<void> {
  if (since === 0) return;
  const first = await feed.firstSeq();
  if (first !== null && since < first - 1)
    throw new ServeProblem(
      410,
      'US_GONE',
      `changes after seq ${since} were pruned (config changes.retainDays); the oldest seq kept is ${first}: start again from 0 (or ${first - 1}) and rebuild what you keep`,
      {},
      { oldestSeq: first },
    );
}

/** Sends the changes after `since` as events, `id` the seq; returns the last seq sent. */
async function sendAfter(stream: SSEStreamingApi, feed: ChangeFeedReader, filter: ChangeFilter, since: number) {
  for (;;) {
    const rows: Change[] = await feed.read({ ...filter, since, limit: CHUNK });
    for (const r of rows) await stream.writeSSE({ id: String(r.seq), event: 'change', data: JSON.stringify(r) });
    since = rows.at(-1)?.seq ?? since;
    if (rows.length < CHUNK) return since;
  }
}

/** `/v1/changes` (JSON, as `changes --json`) and `/v1/changes/stream` (Server-Sent Events, resumable). */
export function mountChangeRoutes(app: Hono<ServeEnv>, ctx: ServeContext): void {
  app.get('/v1/changes', async (c) => {
    const filter = filterOf(c, ctx);
    const since = count('since', c.req.query('since'), 0) ?? 0;
    const limit = Math.min(MAX_LIMIT, count('limit', c.req.query('limit'), 1) ?? MAX_LIMIT);
    const feed = await feedOf(ctx);
    await assertKept(feed, since);
    // As `changes` does: the changes committed before the request, once the transactions then in flight have ended.
    await feed.settle({ signal: AbortSignal.any([c.req.raw.signal, ctx.stopping]) });
    return c.json(await feed.read({ ...filter, since, limit }));
  });

  app.get('/v1/changes/stream', async (c) => {
    const filter = filterOf(c, ctx);
    const since =
      count('Last-Event-ID', requestHeader(c, 'last-event-id'), 0) ?? count('since', c.req.query('since'), 0) ?? 0;
    const feed = await feedOf(ctx);
    await assertKept(feed, since);
    const token = c.get('token').name;
    return streamSSE(c, async (stream) => {
      const stop = AbortSignal.any([c.req.raw.signal, ctx.stopping]);
      const wake = () => stream.abort();
      stop.addEventListener('abort', wake, { once: true });
      ctx.log.info({ tokenName: token, since }, 'change stream opened');
      let at = since;
      let beat = Date.now();
      try {
        while (!stop.aborted && !stream.aborted) {
          at = await sendAfter(stream, feed, filter, at);
          if (Date.now() - beat >= HEARTBEAT_MS) {
            await stream.write(': heartbeat\n\n');
            beat = Date.now();
          }
          await stream.sleep(POLL_MS);
        }
      } finally {
        stop.removeEventListener('abort', wake);
        ctx.log.info({ tokenName: token, at }, 'change stream closed');
      }
    });
  });
}
