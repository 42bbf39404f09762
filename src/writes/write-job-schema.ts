import { toJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { TENANT_SLUG } from '../vocabulary/ids.js';
import type {
  BulkCollection,
  CreateCollection,
  DeleteCollection,
  UpdateCollection,
  WriteJobData,
} from './write-job.js';

/**
 * The one schema of write-job data as stored in Redis. `validateWrite` parses every job with it (after the checks
 * that name a problem in words), the worker re-parses what it reads back, and the JSON Schema in docs/writes.md is
 * generated from it (`writeJobJsonSchema`), so the three cannot drift.
 */

const CREATE = ['series', 'posts', 'blogs', 'media', 'forms'] as const satisfies readonly CreateCollection[];
const UPDATE = [
  'seasons',
  'organizations',
  'media',
  'custom-attributes',
  'redirects',
  'event-instances',
] as const satisfies readonly UpdateCollection[];
const DELETE = 'event-instances' satisfies DeleteCollection;
const BULK = ['organizations', 'series', 'blogs'] as const satisfies readonly BulkCollection[];

/** The request body as the Partners API takes it (its fields are checked at enqueue, see docs/writes.md). */
export const BodySchema = v.pipe(
  v.record(v.string(), v.unknown()),
  v.description(
    'The request body as the Partners API takes it: only fields of the resource shape in the spec (unless the ' +
      "tenant's config sets writes.allowExtraFields), never blocks, theme or themeSettings on series/posts/blogs " +
      'creates and seasons/organizations updates, no __proto__, constructor or prototype key at any depth, and at ' +
      'most writes.maxBodyBytes of JSON (default 1 MiB).',
  ),
);

/** A bulk set/unset: exactly one of where, ids or all (checked by validateWrite), and set and/or unset. */
export const BulkBodySchema = v.pipe(
  v.strictObject({
    where: v.exactOptional(v.record(v.string(), v.unknown())),
    ids: v.exactOptional(v.pipe(v.array(v.union([v.string(), v.number()])), v.minLength(1))),
    all: v.exactOptional(v.literal(true)),
    set: v.exactOptional(v.record(v.string(), v.unknown())),
    unset: v.exactOptional(v.array(v.string())),
    dryRun: v.exactOptional(v.boolean()),
  }),
  v.description(
    'Names the records with exactly one of where, ids or all: true, and the change with set and/or unset ' +
      '(a key may not be both).',
  ),
);

const common = {
  tenant: v.pipe(v.string(), v.regex(TENANT_SLUG)),
  idempotencyKey: v.exactOptional(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
  seq: v.exactOptional(v.pipe(v.number(), v.safeInteger(), v.minValue(1))),
};
const recordId = v.pipe(v.string(), v.minLength(1));

export const WriteJobSchema = v.pipe(
  v.variant('op', [
    v.strictObject({
      op: v.literal('create'),
      collection: v.picklist(CREATE),
      body: BodySchema,
      draft: v.exactOptional(v.boolean()),
      ...common,
    }),
    v.strictObject({
      op: v.literal('update'),
      collection: v.picklist(UPDATE),
      id: recordId,
      body: BodySchema,
      draft: v.exactOptional(v.boolean()),
      ...common,
    }),
    v.strictObject({
      op: v.literal('delete'),
      collection: v.literal(DELETE),
      id: recordId,
      ...common,
    }),
    v.strictObject({
      op: v.literal('bulk'),
      collection: v.picklist(BULK),
      body: BulkBodySchema,
      draft: v.exactOptional(v.boolean()),
      ...common,
    }),
  ]),
  v.title('understudy write job data'),
);

// The interfaces in write-job.ts and the schema describe the same data: the compiler checks both directions
// (bodies aside: the interfaces type them as JSON, the schema as records of unknown).
type NoBody<T> = T extends unknown ? Omit<T, 'body'> : never;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _sameShape: Same<NoBody<v.InferOutput<typeof WriteJobSchema>>, NoBody<WriteJobData>> = true;
void _sameShape;

/** The JSON Schema (draft 2020-12) of write-job data, generated from `WriteJobSchema`; docs/writes.md shows it. */
export function writeJobJsonSchema(): Record<string, unknown> {
  const { $schema, title, ...rest } = toJsonSchema(WriteJobSchema, {
    target: 'draft-2020-12',
    definitions: { body: BodySchema, bulkBody: BulkBodySchema },
  });
  return { $schema, $id: 'https://understudy.local/schemas/write-job.json', title, ...rest };
}
