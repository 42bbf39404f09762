import * as v from 'valibot';
import { UnderstudyError } from '../errors.js';
import { parseExactJson } from '../vocabulary/exact-json.js';
import type { MirrorDefinitions } from './bulk-keys-check.js';
import { jobDataFromRedis, literalProblemIn } from './exact-body.js';
import type { WriteJobData, WriteOp } from './write-job.js';
import { opNamed, unknownOpMessage, type WriteLimits, writeRequestSchema } from './write-request-schema.js';

export type { CustomAttributesSource, MirrorDefinitions, ThemeSchemaSource } from './bulk-keys-check.js';
export { poisonKeyIn } from './poison-keys.js';
export { DEFAULT_MAX_BODY_BYTES, type WriteLimits } from './write-request-schema.js';

/** A write refused before anything was queued; the message is one line naming what is wrong. */
export class WriteValidationError extends UnderstudyError {
  constructor(message: string) {
    super('US_VALIDATION', message);
  }
}

/** What callers hand to the queue: `op` may also be `put` or `patch` (both mean update). */
export interface WriteRequest {
  readonly op: WriteOp | 'put' | 'patch';
  readonly tenant: string;
  readonly collection: string;
  readonly id?: string | number;
  readonly body?: unknown;
  readonly draft?: boolean;
  readonly idempotencyKey?: string;
  /** The name of the `serve` API token it came through, kept on the job (`writes show`); never the token. */
  readonly tokenName?: string;
}

/** `create`, `update`, `put`, `patch`, `delete` or `bulk` to the op it means; throws for anything else. */
export function parseOp(op: unknown): WriteOp {
  const hit = opNamed(op);
  if (!hit) throw new WriteValidationError(unknownOpMessage(op));
  return hit;
}

/**
 * Turns a request into job data, or throws `WriteValidationError` naming the first problem: an unknown op or
 * collection, an op the spec has no route for on that collection, a missing or superfluous id, a body that is
 * not an object, a field the spec forbids there, `draft` where it does not apply, a number beyond 2^53 (no longer
 * exact: a bigint is taken), or bulk keys and values the mirrored theme-settings schema or custom-attribute
 * definitions do not allow. Nothing is queued when it throws. One schema says it all (`writeRequestSchema`).
 */
export async function validateWrite(
  req: unknown,
  mirror: MirrorDefinitions | null | 'skip',
  limits: WriteLimits | 'skip' = {},
): Promise<WriteJobData> {
  const parsed = await v.safeParseAsync(writeRequestSchema(mirror, limits), req, { abortEarly: true });
  if (!parsed.success) throw new WriteValidationError(parsed.issues[0].message);
  return parsed.output;
}

/**
 * Re-validates job data read back from Redis (any client may have put it there): every check but the
 * mirrored definitions, the body cap and the extra-fields rule, which belong to enqueue time. A body given as JSON
 * text (how a body holding integers beyond 2^53 is stored) is parsed exactly first.
 */
export async function parseJobData(raw: unknown): Promise<WriteJobData> {
  let exact: unknown;
  try {
    exact = jobDataFromRedis(raw);
  } catch (err) {
    throw new WriteValidationError((err as Error).message);
  }
  const data = await validateWrite(exact, 'skip', 'skip');
  const seq = (raw as { seq?: unknown }).seq;
  return typeof seq === 'number' && Number.isSafeInteger(seq) ? { ...data, seq } : data;
}

/**
 * A write's body from its JSON text, exactly (an integer beyond 2^53 stays that integer, to the job and to the
 * upstream); throws `WriteValidationError` for text that is not JSON, or whose numbers JSON cannot carry (1e400
 * would become Infinity, 1e-400 zero): what `enqueue --body` and `serve` both say.
 */
export function parseWriteBody(raw: string): unknown {
  let body: unknown;
  try {
    body = parseExactJson(raw);
  } catch (err) {
    throw new WriteValidationError(`body is not valid JSON: ${(err as Error).message}`);
  }
  const problem = literalProblemIn(raw);
  if (problem !== null) throw new WriteValidationError(problem);
  return body;
}
