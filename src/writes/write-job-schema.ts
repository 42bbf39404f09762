import { toJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { FIELD_KINDS, Link, Meta, Num, RESOURCE_SHAPES, Theme } from '../partners/resource-fields.js';
import { RECORD_ID, TENANT_SLUG } from '../vocabulary/ids.js';
import { CREATE_BODIES, UPDATE_BODIES } from './write-bodies.js';
import type {
  BulkCollection,
  CreateCollection,
  DeleteCollection,
  UpdateCollection,
  WriteJobData,
} from './write-job.js';

/**
 * The published schema of write-job data as stored in Redis: the JSON Schema in docs/writes.md is generated from it
 * (`writeJobJsonSchema`). The data `validateWrite` outputs fits it: that function parses each request with
 * `writeRequestSchema` (write-request-schema.ts), built from the same route table and body shapes, which also names
 * each problem in words. Bodies have the shape of their route (`write-bodies.ts`, from the spec's resource shapes); a
 * field the shape does not have is refused at enqueue unless the tenant's config sets `writes.allowExtraFields`.
 */

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
  /** The name of the `understudy serve` API token that enqueued the write (never the token). */
  tokenName: v.exactOptional(v.pipe(v.string(), v.minLength(1), v.maxLength(64))),
} as const;
const recordId = v.pipe(v.string(), v.regex(RECORD_ID));
const draft = v.exactOptional(v.boolean());

const create = <C extends CreateCollection>(collection: C) =>
  v.strictObject({
    op: v.literal('create'),
    collection: v.literal(collection),
    body: CREATE_BODIES[collection],
    draft,
    ...common,
  });
const update = <C extends UpdateCollection>(collection: C) =>
  v.strictObject({
    op: v.literal('update'),
    collection: v.literal(collection),
    id: recordId,
    body: UPDATE_BODIES[collection],
    draft,
    ...common,
  });
const bulk = <C extends BulkCollection>(collection: C) =>
  v.strictObject({ op: v.literal('bulk'), collection: v.literal(collection), body: BulkBodySchema, draft, ...common });

export const WriteJobSchema = v.pipe(
  v.variant('op', [
    v.variant('collection', [create('series'), create('posts'), create('blogs'), create('media'), create('forms')]),
    v.variant('collection', [
      update('seasons'),
      update('organizations'),
      update('media'),
      update('custom-attributes'),
      update('redirects'),
      update('event-instances'),
    ]),
    v.strictObject({
      op: v.literal('delete'),
      collection: v.literal('event-instances' satisfies DeleteCollection),
      id: recordId,
      ...common,
    }),
    v.variant('collection', [bulk('organizations'), bulk('series'), bulk('blogs')]),
  ]),
  v.title('understudy write job data'),
);

// The interfaces in write-job.ts and the schema describe the same data: the compiler checks both directions
// (bodies aside: the interfaces type them as JSON, the schema by their route's shape).
type NoBody<T> = T extends unknown ? Omit<T, 'body'> : never;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _sameShape: Same<NoBody<v.InferOutput<typeof WriteJobSchema>>, NoBody<WriteJobData>> = true;
void _sameShape;

/**
 * A body as job data may also hold it: its JSON text. understudy stores a body holding an integer beyond 2^53 so
 * (`JSON.stringify`, which BullMQ writes job data with, cannot write a bigint, and `JSON.parse`, which it reads them
 * with, would round it); the worker parses the text exactly. Documented in the JSON Schema only: validation sees the
 * parsed body.
 */
const BodyText = v.pipe(
  v.string(),
  v.description(
    "The body's JSON text, parsed exactly (integers beyond 2^53 stay exact): how a body holding one is stored",
  ),
);

const camel = (s: string) => s.replace(/-(.)/g, (_, c: string) => c.toUpperCase());
/** `$defs` names of the bodies: the resource's (`eventInstances`), or `seriesCreate` where the route leaves fields out. */
const bodyDefinitions = (suffix: string, bodies: Readonly<Record<string, v.GenericSchema>>) =>
  Object.fromEntries(
    Object.entries(bodies).map(([c, s]) => [
      `${camel(c)}${s === RESOURCE_SHAPES[c as keyof typeof RESOURCE_SHAPES] ? '' : suffix}`,
      s,
    ]),
  );

/**
 * The `$defs` of the write bodies, by name: each route's body (`eventInstances`, `seriesCreate`, …), the bulk body,
 * and the parts they are made of. The job's JSON Schema and serve's OpenAPI document both name them so.
 */
export const WRITE_BODY_DEFINITIONS: Readonly<Record<string, v.GenericSchema>> = {
  ...bodyDefinitions('Create', CREATE_BODIES),
  ...bodyDefinitions('Update', UPDATE_BODIES),
  bulkBody: BulkBodySchema,
  meta: Meta,
  theme: Theme,
  link: Link,
  ...FIELD_KINDS,
};

/** A number or a bigint (`Num`): in JSON, a number of any size; undefined for any other schema. */
export const jsonNumber = (schema: { readonly type: string }): { type: 'number' | 'integer' } | undefined => {
  if (schema === Num) return { type: 'number' };
  return schema.type === 'bigint' ? { type: 'integer' } : undefined;
};

/** The JSON Schema (draft 2020-12) of write-job data, generated from `WriteJobSchema`; docs/writes.md shows it. */
export function writeJobJsonSchema(): Record<string, unknown> {
  const { $schema, title, ...rest } = toJsonSchema(WriteJobSchema, {
    target: 'draft-2020-12',
    definitions: {
      ...WRITE_BODY_DEFINITIONS,
      ...common,
      id: recordId,
      draft,
      bodyText: BodyText,
    },
    overrideSchema: ({ valibotSchema, jsonSchema }) => {
      const number = jsonNumber(valibotSchema);
      if (number) return number;
      // Each job's body: the object of its route's shape, or its JSON text.
      const entries = (valibotSchema as { entries?: Record<string, unknown> }).entries;
      const props = jsonSchema.properties as Record<string, unknown> | undefined;
      if (valibotSchema.type === 'strict_object' && entries?.op && props?.body) {
        return { ...jsonSchema, properties: { ...props, body: { anyOf: [props.body, { $ref: '#/$defs/bodyText' }] } } };
      }
      return undefined;
    },
  });
  return { $schema, $id: 'https://understudy.local/schemas/write-job.json', title, ...rest };
}

/** One line: `{ "a": 1 }`, `["x", "y"]`. */
const oneLine = (x: unknown): string => {
  if (Array.isArray(x)) return `[${x.map(oneLine).join(', ')}]`;
  if (typeof x !== 'object' || x === null) return JSON.stringify(x) ?? 'null';
  const parts = Object.entries(x).map(([k, y]) => `${JSON.stringify(k)}: ${oneLine(y)}`);
  return parts.length === 0 ? '{}' : `{ ${parts.join(', ')} }`;
};

/**
 * JSON as docs/writes.md prints the schema: indented by two spaces, with every object or array that fits in
 * `width` columns on one line (`{ "$ref": "#/$defs/text" }`), so the schema reads as a list of fields.
 */
export function formatJson(value: unknown, width = 110, indent = ''): string {
  const flat = oneLine(value);
  if (typeof value !== 'object' || value === null || indent.length + flat.length <= width) return flat;
  const inner = `${indent}  `;
  const lines = Array.isArray(value)
    ? value.map((x) => inner + formatJson(x, width, inner))
    : Object.entries(value).map(([k, x]) => `${inner}${JSON.stringify(k)}: ${formatJson(x, width, inner)}`);
  return Array.isArray(value) ? `[\n${lines.join(',\n')}\n${indent}]` : `{\n${lines.join(',\n')}\n${indent}}`;
}
