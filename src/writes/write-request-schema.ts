import * as v from 'valibot';
import {
  COLLECTIONS,
  type CollectionSlug,
  collectionNamed,
  FORBIDDEN_FIELDS,
  FORBIDDEN_ON,
  VERSIONED,
} from '../vocabulary/collections.js';
import { stringifyJson } from '../vocabulary/exact-json.js';
import { isJsonObject, isTenantSlug, type JsonObject, type JsonValue, recordIdProblem } from '../vocabulary/ids.js';
import { tooDeepAt } from '../vocabulary/json-depth.js';
import { bulkKeysProblem, type MirrorDefinitions } from './bulk-keys-check.js';
import { numberProblemIn } from './exact-body.js';
import { poisonKeyIn } from './poison-keys.js';
import { bodyProblem, CREATE_BODIES, MAX_BODY_DEPTH, UPDATE_BODIES } from './write-bodies.js';
import {
  type BulkBody,
  bulkKindOf,
  type CreateCollection,
  draftAllowed,
  type UpdateCollection,
  WRITABLE,
  WRITE_OPS,
  type WriteJobData,
  type WriteOp,
} from './write-job.js';

/**
 * The schema of a write request at enqueue (and of job data read back from Redis): one valibot schema, variants per
 * op and collection, each check with the one-line message it refuses with. Checks run in a fixed order and the first
 * failing one names the problem: the request, op, tenant, collection and route; then id, draft and idempotency key;
 * then the body (keys that reach a prototype, depth, numbers that are not finite or beyond 2^53, size, then its op's
 * shape).
 */

/** Default cap on a write body, as compact JSON (config `writes.maxBodyBytes`). */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** Per-enqueue limits, from the config (`writes.maxBodyBytes`, the tenant's `writes.allowExtraFields`). */
export interface WriteLimits {
  /** Largest body accepted, in bytes of compact JSON; default 1 MiB. */
  readonly maxBodyBytes?: number;
  /** Accept fields the spec's resource shape does not have (create/update bodies); default false. */
  readonly allowExtraFields?: boolean;
}

/** What a request is checked against besides its own shape: the mirror's definitions and the limits ('skip': none). */
interface Against {
  readonly mirror: MirrorDefinitions | null | 'skip';
  readonly limits: WriteLimits | 'skip';
}

const OP_ALIASES: ReadonlyMap<string, WriteOp> = new Map([
  ['create', 'create'],
  ['update', 'update'],
  ['put', 'update'],
  ['patch', 'update'],
  ['delete', 'delete'],
  ['bulk', 'bulk'],
]);

/** `create`, `update`, `put`, `patch`, `delete` or `bulk` (any case) to the op it means; undefined for anything else. */
export const opNamed = (op: unknown): WriteOp | undefined =>
  typeof op === 'string' ? OP_ALIASES.get(op.toLowerCase()) : undefined;

export const unknownOpMessage = (op: unknown): string =>
  `unknown op ${JSON.stringify(op)} (use create, update, patch, put, delete or bulk)`;

/** A check by a function that names what is wrong (in one line), or returns null when nothing is. */
const problemCheck = <T>(problemOf: (value: T) => string | null) =>
  v.rawCheck<T>(({ dataset, addIssue }) => {
    const problem = dataset.typed ? problemOf(dataset.value) : null;
    if (problem !== null) addIssue({ message: problem });
  });

const problemCheckAsync = <T>(problemOf: (value: T) => Promise<string | null>) =>
  v.rawCheckAsync<T>(async ({ dataset, addIssue }) => {
    const problem = dataset.typed ? await problemOf(dataset.value) : null;
    if (problem !== null) addIssue({ message: problem });
  });

/** The fields a request may have: every one present (undefined when not given), nothing else. */
const requestFields = (r: Record<string, unknown>) => ({
  op: r.op,
  tenant: r.tenant,
  collection: r.collection,
  id: r.id,
  draft: r.draft,
  idempotencyKey: r.idempotencyKey,
  body: r.body,
});

const Op = v.pipe(
  v.unknown(),
  v.transform((op) => opNamed(op) ?? op),
  v.picklist(WRITE_OPS, (issue) => unknownOpMessage(issue.input)),
);

const Tenant = v.custom<string>(isTenantSlug, 'tenant must be a tenant slug (a-z, 0-9 and -)');

const Collection = v.pipe(
  v.unknown(),
  v.transform((c) => (typeof c === 'string' ? (collectionNamed(c) ?? c) : c)),
  v.picklist(
    COLLECTIONS,
    (issue) =>
      `unknown collection ${JSON.stringify(issue.input)} (its API path, e.g. event-instances, or its table's name)`,
  ),
);

/** The request's route: its op, on a collection the spec has that route for. */
const Route = v.pipe(
  v.object({
    op: Op,
    tenant: Tenant,
    collection: Collection,
    id: v.unknown(),
    draft: v.unknown(),
    idempotencyKey: v.unknown(),
    body: v.unknown(),
  }),
  v.check(
    (r) => WRITABLE[r.op].includes(r.collection),
    (issue) => {
      const { op, collection } = issue.input as { op: WriteOp; collection: CollectionSlug };
      return `the Partners API has no ${op} route for ${collection} (${op}: ${WRITABLE[op].join(', ')})`;
    },
  ),
);

const given = (id: unknown): boolean => id !== undefined && id !== null && id !== '';

/** The id: of the record an update or delete addresses (as a string), and none for a create or bulk write. */
const idOf = (op: WriteOp, c: CollectionSlug) =>
  op === 'update' || op === 'delete'
    ? v.pipe(
        v.unknown(),
        v.check(given, `${op} of ${c} needs the id of the record`),
        v.check((id) => typeof id === 'string' || typeof id === 'number', 'id must be a string or a number'),
        v.transform(String),
        problemCheck<string>((id) => {
          const problem = recordIdProblem(id);
          return problem && `id ${JSON.stringify(id)} ${problem}`;
        }),
      )
    : v.custom(
        (id) => !given(id),
        `${op} takes no id (the ${op === 'bulk' ? 'body names the records' : 'upstream assigns it'})`,
      );

const draftOf = (op: WriteOp, c: CollectionSlug) =>
  v.optional(
    v.pipe(
      v.boolean('draft must be true or false'),
      v.check(
        (draft) => !draft || draftAllowed(op, c),
        op === 'delete'
          ? 'draft does not apply to a delete (the route takes no query parameters)'
          : `draft applies only to versioned collections (${[...VERSIONED].join(', ')}), not ${c}`,
      ),
    ),
  );

const IDEMPOTENCY_KEY = 'idempotencyKey must be a non-empty string of at most 200 characters';
const IdempotencyKey = v.optional(
  v.pipe(v.string(IDEMPOTENCY_KEY), v.minLength(1, IDEMPOTENCY_KEY), v.maxLength(200, IDEMPOTENCY_KEY)),
);

/** The size of a body as compact JSON, over the cap (or not JSON at all): what is wrong, in words. */
function sizeProblem(body: unknown, max: number): string | null {
  if (body === undefined) return null;
  let json: string | undefined;
  try {
    json = stringifyJson(body as JsonValue);
  } catch (err) {
    return `body is not JSON: ${(err as Error).message.split('\n')[0]}`;
  }
  const size = Buffer.byteLength(json ?? '', 'utf8');
  return size > max ? `body is ${size} bytes of JSON, over the cap of ${max} (config writes.maxBodyBytes)` : null;
}

/** What every body is checked for first, whatever its op: prototype keys, depth, non-finite or inexact numbers, size. */
const anyBody = (limits: WriteLimits | 'skip') =>
  [
    problemCheck<unknown>((body) => {
      const poison = poisonKeyIn(body);
      return poison === null
        ? null
        : `body: key "${poison}" is refused (__proto__, constructor and prototype are never sent)`;
    }),
    problemCheck<unknown>((body) => {
      const deep = tooDeepAt(body, MAX_BODY_DEPTH);
      return deep === null
        ? null
        : `body is nested more than ${MAX_BODY_DEPTH} levels deep (at ${deep.split('.').slice(0, 4).join('.')}…)`;
    }),
    problemCheck<unknown>(numberProblemIn),
    problemCheck<unknown>((body) =>
      limits === 'skip' ? null : sizeProblem(body, limits.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES),
    ),
  ] as const;

const objectBody = (op: WriteOp) => v.custom<JsonObject>(isJsonObject, `${op} needs a body that is a JSON object`);

/** The forbidden fields (spec rule 1) a body sets, as dot paths. */
function forbiddenIn(body: JsonObject): string[] {
  const found: string[] = FORBIDDEN_FIELDS.filter((f) => f in body);
  const theme = body.theme;
  if (!found.includes('theme') && isJsonObject(theme) && 'themeSettings' in theme) found.push('theme.themeSettings');
  return found;
}

/** Spec rule 1: blocks, theme and themeSettings go through the `{id}/blocks` endpoint, not this create or update. */
const forbiddenFields = (op: 'create' | 'update', c: CollectionSlug) =>
  problemCheck<JsonObject>((body) => {
    if (!(FORBIDDEN_ON[c] ?? []).includes(op === 'create' ? 'create' : 'put')) return null;
    const bad = forbiddenIn(body)[0];
    return bad
      ? `field "${bad}" cannot be set by ${op === 'create' ? 'a create' : 'an update'} of ${c}: ` +
          'the spec writes blocks, theme and themeSettings through the {id}/blocks endpoint'
      : null;
  });

const BULK_FIELDS = ['where', 'ids', 'all', 'set', 'unset', 'dryRun'] as const;
/** A bulk body's fields, each as given. */
type BulkFields = { readonly [K in (typeof BULK_FIELDS)[number]]?: unknown };
const BULK_IDS =
  'bulk body: ids must be a non-empty array of record ids (strings or numbers; an id beyond 2^53 as a string)';

const keysOf = (set: unknown): string[] => (isJsonObject(set) ? Object.keys(set) : []);
const listOf = (unset: unknown): string[] => (Array.isArray(unset) ? (unset as string[]) : []);
const isIdList = (ids: unknown): boolean =>
  Array.isArray(ids) && ids.length > 0 && ids.every((i) => typeof i === 'string' || typeof i === 'number');

/** A bulk set/unset body: which records (exactly one of where, ids, all: true), and the keys to set and unset. */
const bulkBodyOf = (c: CollectionSlug) =>
  v.pipe(
    v.record(
      v.picklist(
        BULK_FIELDS,
        (issue) => `bulk body: unknown field "${String(issue.input)}" (allowed: ${BULK_FIELDS.join(', ')})`,
      ),
      v.unknown(),
    ),
    v.check(
      (b) => [b.where, b.ids, b.all].filter((x) => x !== undefined).length === 1,
      'bulk body: name the records with exactly one of where, ids or all: true',
    ),
    v.check((b) => b.where === undefined || isJsonObject(b.where), 'bulk body: where must be an object'),
    v.check((b) => b.ids === undefined || isIdList(b.ids), BULK_IDS),
    problemCheck<BulkFields>((b) => {
      for (const i of listOf(b.ids)) {
        const problem = recordIdProblem(String(i));
        if (problem) return `bulk body: id ${JSON.stringify(i)} ${problem}`;
      }
      return null;
    }),
    v.check((b) => b.all === undefined || b.all === true, 'bulk body: all must be true when given'),
    v.check((b) => b.set === undefined || isJsonObject(b.set), 'bulk body: set must be an object of key: value'),
    v.check(
      (b) => b.unset === undefined || (Array.isArray(b.unset) && b.unset.every((k) => typeof k === 'string')),
      'bulk body: unset must be an array of keys',
    ),
    v.check(
      (b) => keysOf(b.set).length + listOf(b.unset).length > 0,
      `bulk body: set or unset at least one ${bulkKindOf(c)} key`,
    ),
    problemCheck<BulkFields>((b) => {
      const both = keysOf(b.set).find((k) => listOf(b.unset).includes(k));
      return both ? `bulk body: "${both}" is both set and unset` : null;
    }),
    v.check((b) => b.dryRun === undefined || typeof b.dryRun === 'boolean', 'bulk body: dryRun must be true or false'),
  );

/** Job data in the order enqueue writes it: tenant, idempotencyKey, draft, op, collection, id, body. */
const jobData = <B>(r: RouteFields<B>): WriteJobData =>
  ({
    tenant: r.tenant,
    ...(r.idempotencyKey === undefined ? {} : { idempotencyKey: r.idempotencyKey }),
    ...(r.draft === true ? { draft: true } : {}),
    op: r.op,
    collection: r.collection,
    ...(r.op === 'update' || r.op === 'delete' ? { id: r.id } : {}),
    ...(r.op === 'delete' ? {} : { body: r.body }),
  }) as WriteJobData;

/** A request's fields on one route, checked (the id a string where the route takes one). */
interface RouteFields<B> {
  readonly op: WriteOp;
  readonly collection: CollectionSlug;
  readonly tenant: string;
  readonly id: unknown;
  readonly draft?: boolean | undefined;
  readonly idempotencyKey?: string | undefined;
  readonly body: B;
}

/**
 * The fields of a request on one route, in the order they are checked (the body last). Typed by what it outputs,
 * which the checks after it read (valibot's own inference cannot follow ops and collections chosen at run time).
 */
const fieldsOf = <B>(op: WriteOp, c: CollectionSlug, body: v.GenericSchema<unknown, B>) =>
  v.object({
    op: v.literal(op),
    collection: v.literal(c),
    tenant: v.string(), // checked with the route
    id: idOf(op, c),
    draft: draftOf(op, c),
    idempotencyKey: IdempotencyKey,
    body,
  }) as unknown as v.GenericSchema<unknown, RouteFields<B>>;

const deleteJob = (c: CollectionSlug, { limits }: Against) =>
  v.pipe(
    fieldsOf(
      'delete',
      c,
      v.pipe(
        v.unknown(),
        ...anyBody(limits),
        v.check((b) => b === undefined || (isJsonObject(b) && Object.keys(b).length === 0), 'delete takes no body'),
      ),
    ),
    v.transform(jobData),
  );

const bulkJob = (c: CollectionSlug, { mirror, limits }: Against) =>
  v.pipeAsync(
    fieldsOf('bulk', c, v.pipe(v.unknown(), ...anyBody(limits), objectBody('bulk'), bulkBodyOf(c))),
    problemCheckAsync<RouteFields<BulkFields>>((r) =>
      mirror === 'skip' ? Promise.resolve(null) : bulkKeysProblem(mirror, r.tenant, c, r.body as BulkBody),
    ),
    v.transform(jobData),
  );

/** A create or update: its body of its route's shape (fields the shape lacks allowed by `allowExtraFields`). */
const bodyJob = (op: 'create' | 'update', c: CollectionSlug, { limits }: Against) =>
  v.pipe(
    fieldsOf(op, c, v.pipe(v.unknown(), ...anyBody(limits), objectBody(op), forbiddenFields(op, c))),
    v.check(
      (r) => limits === 'skip' || op !== 'update' || Object.keys(r.body).length > 0,
      (issue) =>
        `update of ${c}/${(issue.input as { id: string }).id}: the body is empty, so there is nothing to change`,
    ),
    problemCheck<RouteFields<JsonObject>>((r) =>
      bodyProblem(
        op === 'create' ? CREATE_BODIES[c as CreateCollection] : UPDATE_BODIES[c as UpdateCollection],
        r.body,
        {
          resource: c,
          tenant: r.tenant,
          allowExtraFields: limits === 'skip' || limits.allowExtraFields === true,
        },
      ),
    ),
    v.transform(jobData),
  );

const jobOf = (op: WriteOp, c: CollectionSlug, against: Against) => {
  switch (op) {
    case 'create':
    case 'update':
      return bodyJob(op, c, against);
    case 'delete':
      return deleteJob(c, against);
    case 'bulk':
      return bulkJob(c, against);
  }
};

/**
 * The schema a write request is parsed with (`abortEarly`: the first problem is the one named), given what the
 * mirror defines and the limits of its tenant; `'skip'` leaves those checks out (job data read back from Redis).
 * Its output is the job data.
 */
export const writeRequestSchema = (
  mirror: Against['mirror'],
  limits: Against['limits'],
): v.GenericSchemaAsync<unknown, WriteJobData> => {
  // Options chosen at run time (the routes the spec has): valibot types variants of literal tuples only.
  const jobs = WRITE_OPS.map((op) =>
    v.variantAsync(
      'collection',
      WRITABLE[op].map((c) => jobOf(op, c, { mirror, limits })) as unknown as v.VariantOptionsAsync<'collection'>,
    ),
  ) as unknown as v.VariantOptionsAsync<'op'>;
  return v.pipeAsync(
    v.custom<Record<string, unknown>>(
      (r) => isJsonObject(r as JsonValue),
      'a write is a JSON object with op, tenant, collection and body',
    ),
    v.transform(requestFields),
    Route,
    v.variantAsync('op', jobs) as unknown as v.GenericSchemaAsync<v.InferOutput<typeof Route>, WriteJobData>,
  ) as unknown as v.GenericSchemaAsync<unknown, WriteJobData>;
};
