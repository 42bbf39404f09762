import * as v from 'valibot';
import { UnderstudyError } from '../errors.js';
import {
  type CollectionSlug,
  collectionNamed,
  FORBIDDEN_FIELDS,
  FORBIDDEN_ON,
  THEME_SCHEMA_COLLECTIONS,
  VERSIONED,
} from '../vocabulary/collections.js';
import { stringifyJson } from '../vocabulary/exact-json.js';
import { isJsonObject, isTenantSlug, type JsonObject, type JsonValue, recordIdProblem } from '../vocabulary/ids.js';
import { tooDeepAt } from '../vocabulary/json-depth.js';
import { checkCustomAttributes } from './custom-attributes-check.js';
import { jobDataFromRedis, unsafeNumberIn, unsafeNumberMessage } from './exact-body.js';
import { checkThemeSettings } from './theme-settings-check.js';
import { bodyProblem, CREATE_BODIES, isUnknownField, MAX_BODY_DEPTH, UPDATE_BODIES } from './write-bodies.js';
import {
  type BulkBody,
  bulkKindOf,
  type CreateCollection,
  draftAllowed,
  type UpdateCollection,
  WRITABLE,
  type WriteJobData,
  type WriteOp,
} from './write-job.js';
import { WriteJobSchema } from './write-job-schema.js';

/** Default cap on a write body, as compact JSON (config `writes.maxBodyBytes`). */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** Per-enqueue limits, from the config (`writes.maxBodyBytes`, the tenant's `writes.allowExtraFields`). */
export interface WriteLimits {
  /** Largest body accepted, in bytes of compact JSON; default 1 MiB. */
  readonly maxBodyBytes?: number;
  /** Accept fields the spec's resource shape does not have (create/update bodies); default false. */
  readonly allowExtraFields?: boolean;
}

/** Keys that reach an object's prototype when a body is merged or assigned somewhere: refused at any depth. */
const POISON_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * The dot path of the first `__proto__`, `constructor` or `prototype` own key anywhere in a value, or null.
 * Iterative, so a deeply nested body cannot overflow the stack; JSON.parse makes `__proto__` an own key, which
 * `Object.keys` lists.
 */
export function poisonKeyIn(value: unknown): string | null {
  const stack: [unknown, string][] = [[value, '']];
  // A body built in code may share or cycle objects: each is looked at once.
  const seen = new WeakSet<object>();
  while (stack.length > 0) {
    const [v, path] = stack.pop() as [unknown, string];
    if (typeof v !== 'object' || v === null || seen.has(v)) continue;
    seen.add(v);
    if (Array.isArray(v)) {
      v.forEach((x, i) => {
        stack.push([x, `${path}[${i}]`]);
      });
      continue;
    }
    for (const k of Object.keys(v)) {
      const at = path === '' ? k : `${path}.${k}`;
      if (POISON_KEYS.has(k)) return at;
      stack.push([(v as Record<string, unknown>)[k], at]);
    }
  }
  return null;
}

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
}

/** Where validation finds mirrored theme-settings schemas; null when none is mirrored. */
export type ThemeSchemaSource = (tenant: string, collection: CollectionSlug) => Promise<JsonObject | null>;

/** Where validation finds a tenant's mirrored Custom Attribute record (its attribute definitions); null when none is. */
export type CustomAttributesSource = (tenant: string) => Promise<JsonObject | null>;

/** What the mirror holds that bulk writes are checked against at enqueue. */
export interface MirrorDefinitions {
  /** Theme-settings schemas; absent: theme-settings writes are refused (they need the schema). */
  readonly themeSchema?: ThemeSchemaSource | null;
  /** Custom-attribute definitions; absent, or none mirrored yet: the write is queued unchecked, and `onUnchecked` told. */
  readonly customAttributes?: CustomAttributesSource | null;
  /** Told (one line) when a write is queued without a check the mirror cannot make yet. */
  readonly onUnchecked?: (message: string) => void;
}

const OP_ALIASES: Readonly<Record<string, WriteOp>> = {
  create: 'create',
  update: 'update',
  put: 'update',
  patch: 'update',
  delete: 'delete',
  bulk: 'bulk',
};

/** `create`, `update`, `put`, `patch`, `delete` or `bulk` to the op it means; throws for anything else. */
export function parseOp(op: unknown): WriteOp {
  const hit = typeof op === 'string' ? OP_ALIASES[op.toLowerCase()] : undefined;
  if (!hit)
    throw new WriteValidationError(`unknown op ${JSON.stringify(op)} (use create, update, patch, put, delete or bulk)`);
  return hit;
}

const BULK_FIELDS = new Set(['where', 'ids', 'all', 'set', 'unset', 'dryRun']);

const fail = (message: string): never => {
  throw new WriteValidationError(message);
};

/** The forbidden fields (spec rule 1) a body sets, as dot paths. */
function forbiddenIn(body: JsonObject): string[] {
  const found: string[] = FORBIDDEN_FIELDS.filter((f) => f in body);
  const theme = body.theme;
  if (!found.includes('theme') && isJsonObject(theme) && 'themeSettings' in theme) found.push('theme.themeSettings');
  return found;
}

function checkBulkBody(body: JsonObject, collection: CollectionSlug): BulkBody {
  for (const k of Object.keys(body)) {
    if (!BULK_FIELDS.has(k)) fail(`bulk body: unknown field "${k}" (allowed: ${[...BULK_FIELDS].join(', ')})`);
  }
  const { where, ids, all, set, unset, dryRun } = body;
  const targets = [where !== undefined, ids !== undefined, all !== undefined].filter(Boolean).length;
  if (targets !== 1) fail('bulk body: name the records with exactly one of where, ids or all: true');
  if (where !== undefined && !isJsonObject(where)) fail('bulk body: where must be an object');
  if (
    ids !== undefined &&
    (!Array.isArray(ids) || ids.length === 0 || !ids.every((i) => typeof i === 'string' || typeof i === 'number'))
  )
    fail('bulk body: ids must be a non-empty array of record ids (strings or numbers; an id beyond 2^53 as a string)');
  for (const i of Array.isArray(ids) ? ids : []) {
    const problem = recordIdProblem(String(i));
    if (problem) fail(`bulk body: id ${JSON.stringify(i)} ${problem}`);
  }
  if (all !== undefined && all !== true) fail('bulk body: all must be true when given');
  if (set !== undefined && !isJsonObject(set)) fail('bulk body: set must be an object of key: value');
  if (unset !== undefined && (!Array.isArray(unset) || !unset.every((k) => typeof k === 'string')))
    fail('bulk body: unset must be an array of keys');
  const setKeys = isJsonObject(set) ? Object.keys(set) : [];
  const unsetKeys = Array.isArray(unset) ? (unset as string[]) : [];
  if (setKeys.length + unsetKeys.length === 0)
    fail(`bulk body: set or unset at least one ${bulkKindOf(collection)} key`);
  const both = setKeys.find((k) => unsetKeys.includes(k));
  if (both) fail(`bulk body: "${both}" is both set and unset`);
  if (dryRun !== undefined && typeof dryRun !== 'boolean') fail('bulk body: dryRun must be true or false');
  return body as BulkBody;
}

/** The mirrored schema that governs a collection's theme settings: its own, else one the upstream serves. */
async function themeSchemaFor(
  source: ThemeSchemaSource,
  tenant: string,
  collection: CollectionSlug,
): Promise<JsonObject | null> {
  const own = await source(tenant, collection);
  if (own) return own;
  for (const c of THEME_SCHEMA_COLLECTIONS) {
    const served = await source(tenant, c);
    if (served) return served;
  }
  return null;
}

/**
 * Turns a request into job data, or throws `WriteValidationError` naming the first problem: an unknown op or
 * collection, an op the spec has no route for on that collection, a missing or superfluous id, a body that is
 * not an object, a field the spec forbids there, `draft` where it does not apply, a number beyond 2^53 (no longer
 * exact: a bigint is taken), or bulk keys and values the mirrored theme-settings schema or custom-attribute
 * definitions do not allow. Nothing is queued when it throws.
 */
export async function validateWrite(
  req: unknown,
  mirror: MirrorDefinitions | null | 'skip',
  limits: WriteLimits | 'skip' = {},
): Promise<WriteJobData> {
  if (!isJsonObject(req as JsonValue)) fail('a write is a JSON object with op, tenant, collection and body');
  const r = req as Record<string, unknown>;
  const op = parseOp(r.op);
  const { tenant, collection, draft, idempotencyKey } = r;
  if (!isTenantSlug(tenant)) fail('tenant must be a tenant slug (a-z, 0-9 and -)');
  const t = tenant as string;
  const c =
    (typeof collection === 'string' ? collectionNamed(collection) : undefined) ??
    fail(`unknown collection ${JSON.stringify(collection)} (its API path, e.g. event-instances, or its table's name)`);
  if (!WRITABLE[op].includes(c)) {
    fail(`the Partners API has no ${op} route for ${c} (${op}: ${WRITABLE[op].join(', ')})`);
  }
  const needsId = op === 'update' || op === 'delete';
  const rawId = r.id;
  let id: string | undefined;
  if (rawId !== undefined && rawId !== null && rawId !== '') {
    if (!needsId) fail(`${op} takes no id (the ${op === 'bulk' ? 'body names the records' : 'upstream assigns it'})`);
    if (typeof rawId !== 'string' && typeof rawId !== 'number') fail('id must be a string or a number');
    id = String(rawId);
    const problem = recordIdProblem(id);
    if (problem) fail(`id ${JSON.stringify(id)} ${problem}`);
  } else if (needsId) {
    fail(`${op} of ${c} needs the id of the record`);
  }
  if (draft !== undefined && typeof draft !== 'boolean') fail('draft must be true or false');
  if (draft === true && !draftAllowed(op, c)) {
    fail(
      op === 'delete'
        ? 'draft does not apply to a delete (the route takes no query parameters)'
        : `draft applies only to versioned collections (${[...VERSIONED].join(', ')}), not ${c}`,
    );
  }
  if (
    idempotencyKey !== undefined &&
    (typeof idempotencyKey !== 'string' || idempotencyKey.length === 0 || idempotencyKey.length > 200)
  )
    fail('idempotencyKey must be a non-empty string of at most 200 characters');

  const common = {
    tenant: t,
    ...(idempotencyKey === undefined ? {} : { idempotencyKey: idempotencyKey as string }),
  };
  const withDraft = draft === true ? { draft: true } : {};
  const poison = poisonKeyIn(r.body);
  if (poison !== null) fail(`body: key "${poison}" is refused (__proto__, constructor and prototype are never sent)`);
  const deep = tooDeepAt(r.body, MAX_BODY_DEPTH);
  if (deep !== null)
    fail(`body is nested more than ${MAX_BODY_DEPTH} levels deep (at ${deep.split('.').slice(0, 4).join('.')}…)`);
  const unsafe = unsafeNumberIn(r.body);
  if (unsafe !== null) fail(unsafeNumberMessage(unsafe));
  if (limits !== 'skip' && r.body !== undefined) {
    const max = limits.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    let json: string | undefined;
    try {
      json = stringifyJson(r.body as JsonValue);
    } catch (err) {
      fail(`body is not JSON: ${(err as Error).message.split('\n')[0]}`);
    }
    const size = Buffer.byteLength(json ?? '', 'utf8');
    if (size > max) fail(`body is ${size} bytes of JSON, over the cap of ${max} (config writes.maxBodyBytes)`);
  }
  if (op === 'delete') {
    if (r.body !== undefined && !(isJsonObject(r.body as JsonValue) && Object.keys(r.body as object).length === 0))
      fail('delete takes no body');
    return parseWithSchema({ ...common, op, collection: c, id });
  }
  const body = r.body;
  if (!isJsonObject(body as JsonValue)) fail(`${op} needs a body that is a JSON object`);
  const b = body as JsonObject;
  if (op === 'bulk') {
    const bulk = checkBulkBody(b, c);
    if (mirror !== 'skip') await checkBulkKeys(mirror, t, c, bulk);
    return parseWithSchema({ ...common, ...withDraft, op, collection: c, body: bulk });
  }
  const routeOp = op === 'create' ? 'create' : 'put';
  if ((FORBIDDEN_ON[c] ?? []).includes(routeOp)) {
    const bad = forbiddenIn(b)[0];
    if (bad) {
      fail(
        `field "${bad}" cannot be set by ${op === 'create' ? 'a create' : 'an update'} of ${c}: ` +
          'the spec writes blocks, theme and themeSettings through the {id}/blocks endpoint',
      );
    }
  }
  if (limits !== 'skip' && op === 'update' && Object.keys(b).length === 0)
    fail(`update of ${c}/${id}: the body is empty, so there is nothing to change`);
  const problem = bodyProblem(
    op === 'create' ? CREATE_BODIES[c as CreateCollection] : UPDATE_BODIES[c as UpdateCollection],
    b,
    { resource: c, tenant: t, allowExtraFields: limits === 'skip' || limits.allowExtraFields === true },
  );
  if (problem) fail(problem);
  return parseWithSchema(
    op === 'create'
      ? { ...common, ...withDraft, op, collection: c, body: b }
      : { ...common, ...withDraft, op, collection: c, id, body: b },
  );
}

/** A bulk write's keys and values against what the mirror defines: theme settings, custom attributes. */
async function checkBulkKeys(
  mirror: MirrorDefinitions | null,
  tenant: string,
  collection: CollectionSlug,
  bulk: BulkBody,
): Promise<void> {
  if (bulkKindOf(collection) === 'theme-settings') {
    const source = mirror?.themeSchema;
    if (!source) fail('theme-settings writes are checked against the mirrored schema: give the database');
    const schema = await themeSchemaFor(source as ThemeSchemaSource, tenant, collection);
    if (!schema) fail(`no theme-settings schema is mirrored for tenant ${tenant}: run \`understudy sync\` first`);
    const problem = checkThemeSettings(schema as JsonObject, collection, bulk.set, bulk.unset);
    if (problem) fail(problem);
    return;
  }
  const record = mirror?.customAttributes ? await mirror.customAttributes(tenant) : null;
  if (!record) {
    // Nothing to check against yet (a first write before the first sync): the upstream has the last word.
    mirror?.onUnchecked?.(
      `no custom-attribute definitions are mirrored for tenant ${tenant}: the keys and values of this bulk write ` +
        `to ${collection} are not checked before it is queued (run \`understudy sync --collection custom-attributes\`)`,
    );
    return;
  }
  const problem = checkCustomAttributes(record, collection, tenant, bulk.set, bulk.unset);
  if (problem) fail(problem);
}

/** The last word on job data: `WriteJobSchema`, the schema docs/writes.md publishes. */
function parseWithSchema(data: unknown): WriteJobData {
  const parsed = v.safeParse(WriteJobSchema, data);
  // A field the body's shape does not have was dealt with by the body check (allowed, or refused by name).
  const issue = parsed.issues?.find((i) => !(isUnknownField(i) && i.path?.[0]?.key === 'body'));
  if (issue) fail(`job data: ${v.getDotPath(issue) ?? '(root)'}: ${issue.message}`);
  return data as WriteJobData;
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
    fail((err as Error).message);
  }
  const data = await validateWrite(exact, 'skip', 'skip');
  const seq = (raw as { seq?: unknown }).seq;
  return typeof seq === 'number' && Number.isSafeInteger(seq) ? { ...data, seq } : data;
}
