import * as v from 'valibot';
import {
  BlogShape,
  CustomAttributesShape,
  EventInstanceShape,
  FormShape,
  MediaShape,
  OrganizationShape,
  PostShape,
  RedirectShape,
  SeasonShape,
  SeriesShape,
} from '../partners/resource-fields.js';
import { editDistance } from '../vocabulary/edit-distance.js';
import type { CreateCollection, UpdateCollection } from './write-job.js';

/**
 * The body each write route takes, from the spec's resource shapes (`src/partners/resource-fields.ts`): the typed
 * bodies of the TypeScript API, the checks at enqueue and the job JSON Schema all come from these.
 * Spec rule 1: creates of series, posts and blogs and PUTs of seasons and organizations do not set `blocks` or
 * `theme` (they go through the `{id}/blocks` endpoint), so those bodies leave them out.
 */
export const CREATE_BODIES = {
  series: v.omit(SeriesShape, ['blocks', 'theme']),
  posts: v.omit(PostShape, ['blocks']),
  blogs: v.omit(BlogShape, ['blocks', 'theme']),
  media: MediaShape,
  forms: FormShape,
} as const satisfies Record<CreateCollection, v.GenericSchema>;

export const UPDATE_BODIES = {
  seasons: v.omit(SeasonShape, ['blocks', 'theme']),
  organizations: v.omit(OrganizationShape, ['blocks', 'theme']),
  media: MediaShape,
  'custom-attributes': CustomAttributesShape,
  redirects: RedirectShape,
  'event-instances': EventInstanceShape,
} as const satisfies Record<UpdateCollection, v.GenericSchema>;

/** The body of a create of collection `C`, as the spec shows the resource (every field optional). */
export type CreateBody<C extends CreateCollection> = v.InferInput<(typeof CREATE_BODIES)[C]>;
/** The body of a partial update of collection `C` (PUT, or PATCH for event instances). */
export type UpdateBody<C extends UpdateCollection> = v.InferInput<(typeof UPDATE_BODIES)[C]>;

/**
 * Bodies nested deeper than this are refused at enqueue (the body object itself is level 1): well past any shape of
 * the spec or rich text, and under the upstream's own limit (MongoDB, under Payload, stores at most 100 levels).
 */
export const MAX_BODY_DEPTH = 64;

/** The known name closest to `name`, when it is close enough to be a typo of it. */
export function closestName(name: string, known: readonly string[]): string | null {
  let best: string | null = null;
  let bestD = Math.max(2, Math.floor(name.length / 4)) + 1;
  for (const k of known) {
    const d = editDistance(name, k);
    if (d < bestD) {
      best = k;
      bestD = d;
    }
  }
  return best;
}

type AnySchema = v.GenericSchema & {
  readonly wrapped?: AnySchema;
  readonly options?: readonly AnySchema[];
  readonly entries?: Readonly<Record<string, AnySchema>>;
  readonly item?: AnySchema;
};

/** The object fields a schema has at a path of keys (optional, nullable and union wrappers looked through). */
function fieldsAt(schema: AnySchema, keys: readonly PropertyKey[]): string[] {
  let s: AnySchema | undefined = schema;
  const unwrap = (x: AnySchema | undefined): AnySchema | undefined => {
    let cur = x;
    while (cur?.wrapped) cur = cur.wrapped;
    return cur?.options?.find((o) => o.entries || o.item) ?? cur;
  };
  for (const k of keys) {
    s = unwrap(s);
    s = s?.entries ? s.entries[String(k)] : s?.item;
  }
  s = unwrap(s);
  return s?.entries ? Object.keys(s.entries) : [];
}

/** A valibot issue for a field a strict object does not have. */
const isUnknownField = (i: v.GenericIssue): boolean => i.expected === 'never' && i.type === 'strict_object';

/** What is wrong with a body, as one line naming the field's dot path; null when it fits its route's shape. */
export function bodyProblem(
  schema: v.GenericSchema,
  body: unknown,
  opts: { readonly allowExtraFields: boolean; readonly resource: string; readonly tenant: string },
): string | null {
  const parsed = v.safeParse(schema, body, { abortEarly: false });
  if (parsed.success) return null;
  const keysOf = (i: v.GenericIssue) => (i.path ?? []).map((p) => p.key as PropertyKey);
  const extra = parsed.issues.find(isUnknownField);
  if (extra && !opts.allowExtraFields) {
    const keys = keysOf(extra);
    const name = String(keys[keys.length - 1]);
    const hint = closestName(name, fieldsAt(schema as AnySchema, keys.slice(0, -1)));
    return (
      `field "${v.getDotPath(extra)}" is not in the spec's ${opts.resource} resource shape` +
      `${hint ? `: did you mean "${hint}"?` : ''} (set writes.allowExtraFields on tenant ${opts.tenant} in the ` +
      'config to send fields the spec does not show)'
    );
  }
  const wrong = parsed.issues.find((i) => !isUnknownField(i));
  if (!wrong) return null;
  const at = v.getDotPath(wrong);
  return `field "${at ?? '(body)'}" of the ${opts.resource} body: ${wrong.message}`;
}
