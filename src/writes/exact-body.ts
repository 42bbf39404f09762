import { parseExactJson, stringifyJson } from '../vocabulary/exact-json.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../vocabulary/ids.js';
import type { WriteJobData } from './write-job.js';

/**
 * Integers beyond 2^53 in write bodies. A JS number that large is no longer exact (9007199254740993 is already
 * 9007199254740992 by the time a caller holds it), so such a number is refused at enqueue; the value is written as a
 * `bigint` instead, which the body keeps to the upstream. BullMQ stores job data with `JSON.stringify`, which cannot
 * write a `bigint`, so a body holding one goes into Redis as its exact JSON text (`body: "{…}"`), and the worker
 * parses that text back exactly (docs/writes.md, "Job data").
 */

/** Walks a value depth first (iteratively: a body may be deep), calling `visit` with each value and its dot path. */
function walk(value: unknown, visit: (v: unknown, path: string) => boolean): boolean {
  const stack: [unknown, string][] = [[value, '']];
  const seen = new WeakSet<object>();
  while (stack.length > 0) {
    const [v, path] = stack.pop() as [unknown, string];
    if (visit(v, path)) return true;
    if (typeof v !== 'object' || v === null || seen.has(v)) continue;
    seen.add(v);
    if (Array.isArray(v)) {
      for (const [i, x] of v.entries()) stack.push([x, `${path}[${i}]`]);
    } else {
      for (const [k, x] of Object.entries(v)) stack.push([x, path === '' ? k : `${path}.${k}`]);
    }
  }
  return false;
}

/** The first number in a body that a JS number does not hold exactly (beyond ±(2^53 − 1)), with its path; or null. */
export function unsafeNumberIn(body: unknown): { readonly path: string; readonly value: number } | null {
  let hit: { path: string; value: number } | null = null;
  walk(body, (v, path) => {
    if (typeof v === 'number' && Number.isFinite(v) && Math.abs(v) > Number.MAX_SAFE_INTEGER) hit = { path, value: v };
    return hit !== null;
  });
  return hit;
}

/** The refusal of such a number: its path, why, and what to pass instead. */
export const unsafeNumberMessage = (hit: { readonly path: string; readonly value: number }): string =>
  `field "${hit.path || '(body)'}" holds the number ${BigInt(hit.value)}, beyond 2^53 (9007199254740991), where a ` +
  'JavaScript number is no longer exact and may already have been rounded: pass the integer as a bigint ' +
  `(${BigInt(hit.value)}n, or read JSON with an exact parser) or as a string`;

/** Whether a value holds a `bigint` anywhere. */
export const holdsBigint = (value: unknown): boolean => walk(value, (v) => typeof v === 'bigint');

/** Job data as it goes into Redis: a body holding a `bigint` becomes its exact JSON text; any other stays as it is. */
export function jobDataForRedis<T extends WriteJobData>(data: T): T | (Omit<T, 'body'> & { body: string }) {
  if (!('body' in data) || !holdsBigint(data.body)) return data;
  return { ...data, body: stringifyJson(data.body as JsonValue) };
}

/**
 * Job data read back from Redis with a body given as JSON text (understudy's form for bodies holding integers beyond
 * 2^53; any client may use it) turned back into an object, exactly: every integer beyond 2^53 as a `bigint`. Throws
 * a one-line reason when the text is not a JSON object; data without a text body is returned as it is.
 */
export function jobDataFromRedis(raw: unknown): unknown {
  if (!isJsonObject(raw as JsonValue)) return raw;
  const r = raw as Record<string, unknown>;
  if (typeof r.body !== 'string') return raw;
  let body: JsonValue;
  try {
    body = parseExactJson(r.body);
  } catch (err) {
    throw new SyntaxError(`body is JSON text that is not valid JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!isJsonObject(body)) throw new SyntaxError('body is JSON text that is not a JSON object');
  return { ...r, body: body as JsonObject };
}
