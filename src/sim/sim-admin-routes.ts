import type { IncomingMessage, ServerResponse } from 'node:http';
import { isCollectionSlug } from '../vocabulary/collections.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../vocabulary/ids.js';
import type { MutatorSpec, SimControls } from './sim-controls.js';
import type { FaultSpec } from './sim-faults.js';
import type { MutateSpec } from './sim-mutate.js';
import type { RateLimits } from './sim-rate-limit.js';
import type { SimState } from './sim-state.js';

/** One call of a control route: the controls, the state they act on and the request's JSON body. */
interface AdminCall {
  readonly controls: SimControls;
  readonly state: SimState;
  readonly body: JsonValue | undefined;
  /** The body when it is an object, else `{}`. */
  readonly obj: JsonObject;
}

const setRateLimits = (a: AdminCall): unknown => {
  a.controls.setRateLimits(a.obj as Partial<RateLimits>);
  return a.state.limiter.limits;
};

/** The control routes by `METHOD path` (after `/__sim/`); each returns the 200 answer's body. */
const ADMIN_ROUTES = new Map<string, (a: AdminCall) => unknown>([
  [
    'POST faults',
    (a) => {
      for (const spec of Array.isArray(a.body) ? a.body : [a.obj])
        a.controls.injectFaults(spec as unknown as FaultSpec);
      return { pending: a.state.faults.pending() };
    },
  ],
  [
    'DELETE faults',
    (a) => {
      a.controls.clearFaults();
      return { pending: 0 };
    },
  ],
  ['GET faults', (a) => ({ pending: a.state.faults.pending() })],
  ['POST mutate', (a) => a.controls.mutate(a.obj as unknown as MutateSpec)],
  [
    'POST mutator/start',
    (a) => {
      a.controls.startMutator(a.obj as unknown as MutatorSpec);
      return { running: true };
    },
  ],
  [
    'POST mutator/stop',
    (a) => {
      a.controls.stopMutator();
      return { running: false };
    },
  ],
  ['GET counters', (a) => a.controls.counters()],
  ['GET request-log', (a) => a.controls.requestLog()],
  [
    'POST reset',
    (a) => {
      a.controls.reset();
      return { ok: true };
    },
  ],
  ['PUT rate-limits', setRateLimits],
  ['POST rate-limits', setRateLimits],
  ['GET tenants', (a) => a.state.tenants.map((t) => ({ slug: t.slug }))],
]);

const readJson = (req: IncomingMessage): Promise<JsonValue | undefined> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8').trim();
      if (!text) return resolve(undefined);
      try {
        resolve(JSON.parse(text) as JsonValue);
      } catch (err) {
        reject(err);
      }
    });
    req.on('error', reject);
  });

const reply = (res: ServerResponse, status: number, body: unknown): void => {
  const text = JSON.stringify(body ?? null);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
};

/** `GET /__sim/docs/{tenant}/{collection}[?draft=true]`: the records as a depth-0 read returns them. */
const answerDocs = (res: ServerResponse, a: AdminCall, segs: readonly string[], url: string): void => {
  const c = segs[2] as string;
  if (!isCollectionSlug(c)) reply(res, 404, { errors: [{ message: `unknown collection ${c}` }] });
  else reply(res, 200, a.controls.docs(segs[1] as string, c, { draft: /[?&]draft=true(&|$)/.test(url) }));
};

/** The HTTP mirror of the controls, under `/__sim/` (no auth, no rate limit). */
export async function admin(
  controls: SimControls,
  state: SimState,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const [pathname = ''] = (req.url ?? '').split('?');
  const segs = pathname.split('/').filter(Boolean).slice(1).map(decodeURIComponent);
  const method = req.method ?? 'GET';
  let body: JsonValue | undefined;
  try {
    body = await readJson(req);
  } catch {
    return reply(res, 400, { errors: [{ message: 'The request body is not valid JSON' }] });
  }
  const a: AdminCall = { controls, state, body, obj: (isJsonObject(body as JsonValue) ? body : {}) as JsonObject };
  try {
    const answer = ADMIN_ROUTES.get(`${method} ${segs.join('/')}`);
    if (answer) return reply(res, 200, answer(a));
    if (method === 'GET' && segs[0] === 'docs' && segs.length === 3) return answerDocs(res, a, segs, req.url ?? '');
    return reply(res, 404, { errors: [{ message: 'Unknown admin route' }] });
  } catch (err) {
    return reply(res, 400, { errors: [{ message: (err as Error).message }] });
  }
}
