import { hasCode, UnderstudyError } from '../errors.js';
import type { CallOptions, PartnersClient } from '../partners/partners-client.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import { isJsonObject, type JsonObject, type JsonValue, recordId, type UpstreamDoc } from '../vocabulary/ids.js';
import { UPDATE_BODIES } from './write-bodies.js';
import type { UpdateCollection } from './write-job.js';

// An update of a versioned record (seasons, organizations) that is not a draft write. Payload 3 applies an update
// onto the record's latest version, a pending draft included, and keeps that version's `_status`
// (collections/operations/updateByID.ts: `getLatestCollectionVersion`; utilities/update.ts: `beforeChange` over
// `docWithLocales`, `_status` from the data else from that version): one field fix would unpublish the record and
// fold the editor's draft into it. So the update is sent as requests that come out the same on a spec-faithful
// upstream and on Payload (docs/writes.md, "An update of a versioned record"). This file plans them and compares
// what came back with what was planned; versioned-sequence.ts sends them.

/** One request of a planned update. */
export interface UpdateStep {
  readonly body: JsonObject;
  /** Sent with `draft=true`. */
  readonly draft: boolean;
  /** Sent with `locale=all` (fields carried over from a version read with every locale). */
  readonly allLocales: boolean;
}

/** The two versions of a record as read before an update (every locale, relationships as ids). */
export interface Versions {
  /** The published version; null when the record was never published (its published read answers 404). */
  readonly published: UpstreamDoc | null;
  /** The latest version (`draft=true`): a pending draft, else the published version; null when not found. */
  readonly latest: UpstreamDoc | null;
}

export type UpdatePlan =
  /** Neither read finds the record: the update is sent as asked (the upstream answers 404). */
  | { readonly kind: 'as-asked' }
  /** Never published: the body as a draft write, so it stays a draft. */
  | { readonly kind: 'draft-only'; readonly steps: readonly [UpdateStep] }
  | {
      readonly kind: 'published';
      /** The record had a pending draft (newer than its published version). */
      readonly pendingDraft: boolean;
      /** The fields the draft differs in, carried back into each version (never the body's). */
      readonly restored: readonly string[];
      readonly steps: readonly UpdateStep[];
    };

/** Fields a version carries that no write sets: the server's, and the status each step sets itself. */
const NOT_CARRIED = new Set(['id', 'createdAt', 'updatedAt', 'tenant', '_status']);

/** Fields an upstream derives from another when it is written (the body's change of it changes them too). */
const DERIVED: Readonly<Record<string, readonly string[]>> = {
  slug: ['url', 'publishedSlug', 'publishedRelativePath', 'relativePath', 'breadcrumbs'],
};

/** Fields the route's body takes (the spec's resource shape without `blocks` and `theme`), but `NOT_CARRIED`. */
function carriedFields(collection: UpdateCollection): ReadonlySet<string> {
  const schema = UPDATE_BODIES[collection] as unknown as { readonly entries?: Readonly<Record<string, unknown>> };
  return new Set(Object.keys(schema.entries ?? {}).filter((k) => !NOT_CARRIED.has(k)));
}

/** The fields a body sets, and those an upstream derives from them (`<stem>_html` of a rich-text field, a slug's URLs). */
export function bodyFields(body: JsonObject): ReadonlySet<string> {
  const out = new Set<string>();
  for (const k of Object.keys(body)) {
    out.add(k);
    out.add(`${k}_html`);
    for (const d of DERIVED[k] ?? []) out.add(d);
  }
  return out;
}

export const pick = (doc: UpstreamDoc, keys: Iterable<string>): JsonObject => {
  const out: JsonObject = {};
  for (const k of keys) {
    const v = doc[k];
    if (v !== undefined) out[k] = v;
  }
  return out;
};

/** Deep equality of JSON values (object key order ignored). */
function sameJson(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => sameJson(x, b[i]));
  }
  if (isJsonObject(a) && isJsonObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) if (!sameJson(a[k], b[k])) return false;
    return true;
  }
  if ((a === undefined || a === null) && (b === undefined || b === null)) return true;
  return typeof a === 'bigint' || typeof b === 'bigint' ? String(a) === String(b) : false;
}

const LOCALE_CODE = /^[a-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*$/;

/** Whether a value read with `locale=all` holds one value per locale (a localized field): every key a locale code. */
const isLocaleMap = (v: JsonValue | undefined): v is JsonObject =>
  isJsonObject(v) && Object.keys(v).length > 0 && Object.keys(v).every((k) => k !== 'id' && LOCALE_CODE.test(k));

/**
 * Whether `actual` holds what `expected` (read with `locale=all`) holds: equal, or, when `actual` was read in one
 * locale and `expected` holds one value per locale, one of those values (which locale is the default is not known).
 */
function sameContent(actual: JsonValue | undefined, expected: JsonValue | undefined): boolean {
  if (sameJson(actual, expected)) return true;
  if (!isLocaleMap(expected) || isLocaleMap(actual)) return false;
  return Object.values(expected).some((v) => sameJson(actual, v));
}

/**
 * The fields in which `actual` does not hold what `expected` holds (locale shapes compared as `sameContent` does),
 * but the server's fields and `skip`, sorted.
 */
export function driftedFields(actual: UpstreamDoc, expected: UpstreamDoc, skip: ReadonlySet<string>): string[] {
  return [...new Set([...Object.keys(actual), ...Object.keys(expected)])]
    .filter((k) => !NOT_CARRIED.has(k) && !skip.has(k) && !sameContent(actual[k], expected[k]))
    .sort();
}

/** Which version a read asks for, and whether with every locale (to compare and carry) or the default (to mirror). */
export interface VersionRead {
  readonly draft: boolean;
  readonly allLocales: boolean;
}

/** Reads one version of a record (relationships as ids); null when that read answers 404. */
export async function readVersion(
  client: PartnersClient,
  collection: CollectionSlug,
  id: string,
  which: VersionRead,
  call: CallOptions,
): Promise<UpstreamDoc | null> {
  try {
    return await client.getById(
      collection,
      recordId(id),
      { depth: 0, ...(which.allLocales ? { locale: 'all' } : {}), ...(which.draft ? { draft: true } : {}) },
      call,
    );
  } catch (err) {
    if (hasCode(err, 'US_NOT_FOUND')) return null;
    throw err;
  }
}

/** Reads the published and the latest version of a record, back to back. */
export async function readVersions(
  client: PartnersClient,
  collection: CollectionSlug,
  id: string,
  allLocales: boolean,
  call: CallOptions,
): Promise<Versions> {
  const published = await readVersion(client, collection, id, { draft: false, allLocales }, call);
  const latest = await readVersion(client, collection, id, { draft: true, allLocales }, call);
  return { published, latest };
}

const refused = (collection: string, id: string, differing: readonly string[]) =>
  new UnderstudyError(
    'US_VALIDATION',
    `refused before sending: ${collection} ${id} has a pending draft whose ${differing.join(', ')} ` +
      `differ${differing.length === 1 ? 's' : ''} from its published version, and an update cannot carry ` +
      `${differing.length === 1 ? 'that field' : 'those fields'} (a Payload-style upstream applies an update onto ` +
      'the latest version, so the draft would go live). Publish or discard the draft first, or write the draft ' +
      '(draft=true) (see docs/writes.md, "An update of a versioned record")',
  );

/**
 * The requests that put `from`'s values of `restored` back into a version together with the body: one request, or,
 * when the restore needs `locale=all` and the body sets a localized field in one locale (which `locale=all` would
 * read as every locale's), the restore and then the body.
 */
export function restoreSteps(
  versions: readonly UpstreamDoc[],
  from: UpstreamDoc,
  restored: readonly string[],
  body: JsonObject,
  target: { readonly draft: boolean; readonly status?: JsonObject },
): UpdateStep[] {
  const localized = (k: string) => versions.some((v) => isLocaleMap(v[k]));
  const allLocales = restored.some(localized);
  const status = target.status ?? {};
  const draft = target.draft;
  if (restored.length === 0) return [{ body: { ...body, ...status }, draft, allLocales: false }];
  const split = allLocales && Object.keys(body).some((k) => localized(k) && !isJsonObject(body[k]));
  if (!split) return [{ body: { ...pick(from, restored), ...body, ...status }, draft, allLocales }];
  return [
    { body: { ...pick(from, restored), ...status }, draft, allLocales: true },
    { body: { ...body, ...status }, draft, allLocales: false },
  ];
}

/**
 * Plans an update of a versioned record that is not a draft write and does not set `_status` itself, from the two
 * versions read first:
 * - published, no pending draft: the body with `_status: "published"` (Payload keeps the latest version's status);
 * - published with a pending draft: (1) the fields in which the draft differs, as published, with the body and
 *   `_status: "published"`: the published version is the latest again with the body, and nothing of the draft goes
 *   live; (2) the same fields as in the draft, with the body, `draft=true`: the draft is the latest again, its own
 *   edits intact, with the body's fields (as the spec's bulk routes copy them into a newer draft). Only the fields
 *   that differ are sent, so a field neither version changes (an image since deleted, say) is never re-sent;
 * - never published (a draft only): the body with `draft=true`, so it stays a draft;
 * - neither read finds it: sent as asked.
 * Refused when the pending draft differs from the published version in a field no update can carry (`blocks` and
 * `theme`, which go through `{id}/blocks`, or a field the spec does not show): the first request would publish it.
 */
export function planVersionedUpdate(
  collection: UpdateCollection,
  id: string,
  body: JsonObject,
  { published, latest }: Versions,
): UpdatePlan {
  if (!published) {
    if (!latest) return { kind: 'as-asked' };
    return { kind: 'draft-only', steps: [{ body, draft: true, allLocales: false }] };
  }
  const publish = { draft: false, status: { _status: 'published' } };
  if (latest?._status !== 'draft') {
    return {
      kind: 'published',
      pendingDraft: false,
      restored: [],
      steps: restoreSteps([], published, [], body, publish),
    };
  }
  const carried = carriedFields(collection);
  const differing = driftedFields(latest, published, bodyFields(body));
  const uncarried = differing.filter((k) => !carried.has(k));
  if (uncarried.length > 0) throw refused(collection, id, uncarried);
  const both = [published, latest];
  return {
    kind: 'published',
    pendingDraft: true,
    restored: differing,
    steps: [
      ...restoreSteps(both, published, differing, body, publish),
      ...restoreSteps(both, latest, differing, body, { draft: true }),
    ],
  };
}

/** The fields of `collection` an update can carry back into a version. */
export const carriedBy = (collection: UpdateCollection, fields: readonly string[]): string[] => {
  const carried = carriedFields(collection);
  return fields.filter((k) => carried.has(k));
};
