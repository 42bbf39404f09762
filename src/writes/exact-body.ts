import { NumberLiteral, parseExactJson, parseKeepingLiterals, stringifyJson } from '../vocabulary/exact-json.js';
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

/** The refusal of a JS number beyond 2^53: its path, why, and what to pass instead. */
const unsafeNumberMessage = (path: string, value: number): string =>
  `field "${path || '(body)'}" holds the number ${BigInt(value)}, beyond 2^53 (9007199254740991), where a ` +
  'JavaScript number is no longer exact and may already have been rounded: pass the integer as a bigint ' +
  `(${BigInt(value)}n, or read JSON with an exact parser) or as a string`;

/** What is wrong with one number of a write body, or null: not finite (sent as null), or an inexact integer. */
function numberProblem(value: number, path: string): string | null {
  if (!Number.isFinite(value))
    return (
      `field "${path || '(body)'}" holds ${value}, not a finite number: JSON has no such value, and it would ` +
      'reach the upstream as null'
    );
  return Math.abs(value) > Number.MAX_SAFE_INTEGER ? unsafeNumberMessage(path, value) : null;
}

/**
 * The first number of a body that a write cannot carry as it is, named by its dot path: Infinity, -Infinity or NaN
 * (`JSON.stringify` writes them as null, which clears a field), or a JS number beyond ±(2^53 − 1), no longer exact.
 * Null when every number is fine.
 */
export function numberProblemIn(body: unknown): string | null {
  let problem: string | null = null;
  walk(body, (v, path) => {
    if (typeof v === 'number') problem = numberProblem(v, path);
    return problem !== null;
  });
  return problem;
}

/** A long literal shown by its ends. */
const shown = (literal: string): string =>
  literal.length > 40 ? `${literal.slice(0, 24)}…${literal.slice(-12)}` : literal;

/** What is wrong with a number as written, or null: too large for a double (read as ±Infinity), or too small (0). */
function literalProblem(literal: string, path: string): string | null {
  // An integer literal is read exactly (a bigint beyond 2^53), however long.
  if (/^-?\d+$/.test(literal)) return null;
  const read = Number(literal);
  const at = `field "${path || '(body)'}" holds the number ${shown(literal)}`;
  if (!Number.isFinite(read))
    return (
      `${at}, beyond the largest a double (a JavaScript number, and most JSON readers) holds, ` +
      '±1.7976931348623157e308: it would be read as Infinity and reach the upstream as null'
    );
  const mantissa = literal.split(/[eE]/)[0] ?? '';
  return read === 0 && /[1-9]/.test(mantissa)
    ? `${at}, too small for a double to tell from 0 (the smallest is 5e-324): it would reach the upstream as 0`
    : null;
}

/** Where a number a double cannot hold may be written: with an exponent, or in 309 digits or more. */
const MAYBE_OUT_OF_RANGE = /\d[eE]|\d{309}/;

/**
 * The first number literal of a write body's JSON text that a double cannot hold, named by its dot path: `1e400`
 * (read as Infinity, sent as null) or `1e-400` (read as 0). Reading the text has already changed such a number, so
 * this looks at the text itself; the check of the read body (`numberProblemIn`) then sees the rest. Null when none.
 */
export function literalProblemIn(text: string): string | null {
  if (!MAYBE_OUT_OF_RANGE.test(text)) return null;
  let tree: unknown;
  try {
    tree = parseKeepingLiterals(text);
  } catch {
    return null; // not JSON: its parse says so
  }
  let problem: string | null = null;
  walk(tree, (v, path) => {
    if (v instanceof NumberLiteral) problem = literalProblem(v.text, path);
    return problem !== null;
  });
  return problem;
}

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
 * a one-line reason when the text is not a JSON object, or holds a number a double cannot hold (`literalProblemIn`);
 * data without a text body is returned as it is.
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
  const problem = literalProblemIn(r.body);
  if (problem !== null) throw new RangeError(problem);
  return { ...r, body: body as JsonObject };
}
