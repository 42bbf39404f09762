import { UnderstudyError, UpstreamError } from '../errors.js';
import type { CallOptions, PartnersClient } from '../partners/partners-client.js';
import { type CollectionSlug, VERSIONED } from '../vocabulary/collections.js';
import { isJsonObject, type JsonObject, type JsonValue, recordId, type UpstreamDoc } from '../vocabulary/ids.js';
import { UPDATE_BODIES } from './write-bodies.js';
import type { UpdateCollection } from './write-job.js';

// An update of a versioned record (seasons, organizations) that is not a draft write. Payload 3 applies an update
// onto the record's latest version, a pending draft included, and keeps that version's `_status`
// (collections/operations/updateByID.ts: `getLatestCollectionVersion`; utilities/update.ts: `beforeChange` over
// `docWithLocales`, `_status` from the data else from that version): one field fix would unpublish the record and
// fold the editor's draft into it. So the update is sent as requests that come out the same on a spec-faithful
// upstream and on Payload (docs/writes.md, "An update of a versioned record").

/** One request of a planned update. */
export interface UpdateStep {
  readonly body: JsonObject;
  /** Sent with `draft=true`. */
  readonly draft: boolean;
  /** Sent with `locale=all` (a whole version carried over, every locale of it). */
  readonly allLocales: boolean;
  /** Its answer is written through into the mirror (the other steps only restore a version). */
  readonly mirror: boolean;
}

export interface UpdatePlan {
  readonly steps: readonly UpdateStep[];
  /** The record had a published version before the write (an answer saying `draft` then means it was unpublished). */
  readonly wasPublished: boolean;
  /** The record had a pending draft (newer than its published version). */
  readonly pendingDraft: boolean;
}

/** Fields a version carries that no write sets: the server's, and the status each step sets itself. */
const NOT_CARRIED = new Set(['id', 'createdAt', 'updatedAt', 'tenant', '_status']);

/** Fields the route's body takes (the spec's resource shape without `blocks` and `theme`), but `NOT_CARRIED`. */
function carriedFields(collection: UpdateCollection): ReadonlySet<string> {
  const schema = UPDATE_BODIES[collection] as unknown as { readonly entries?: Readonly<Record<string, unknown>> };
  return new Set(Object.keys(schema.entries ?? {}).filter((k) => !NOT_CARRIED.has(k)));
}

const pick = (doc: UpstreamDoc, keys: ReadonlySet<string>): JsonObject => {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(doc)) if (keys.has(k) && v !== undefined) out[k] = v;
  return out;
};

/** Deep equality of JSON values (object key order ignored). */
export function sameJson(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
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
  return typeof a === 'bigint' || typeof b === 'bigint' ? String(a) === String(b) : false;
}

/** Reads one version of a record (every locale, relationships as ids); null when that read answers 404. */
async function readVersion(
  client: PartnersClient,
  collection: CollectionSlug,
  id: string,
  draft: boolean,
  call: CallOptions,
): Promise<UpstreamDoc | null> {
  try {
    return await client.getById(
      collection,
      recordId(id),
      { depth: 0, locale: 'all', ...(draft ? { draft } : {}) },
      call,
    );
  } catch (err) {
    if (err instanceof UpstreamError && err.status === 404 && err.code !== 'US_AUTH') return null;
    throw err;
  }
}

/**
 * Plans an update of a versioned record that is not a draft write and does not set `_status` itself; null for any
 * other update (sent as asked). Reads the record's published version and its latest version (`draft=true`) first:
 * - published, no pending draft: the body with `_status: "published"` (Payload keeps the latest version's status);
 * - published with a pending draft: (1) the published version's fields with `_status: "published"` (every locale),
 *   so the published version is the latest again and nothing of the draft goes live; (2) the body with
 *   `_status: "published"`; (3) the draft's fields with `draft=true` (every locale), so the draft is the latest
 *   again with its own edits; (4) the body with `draft=true`, so the draft gets the targeted fields too (as the
 *   spec's bulk routes copy them into a newer draft);
 * - never published (a draft only): the body with `draft=true`, so it stays a draft;
 * - neither read finds it: null (the update answers 404 as usual).
 * Refused, before anything is sent, when the pending draft differs from the published version in a field no
 * update can carry (`blocks` and `theme`, which go through `{id}/blocks`, or a field the spec does not show): the
 * first request would publish the draft's value of it.
 */
export async function planVersionedUpdate(
  client: PartnersClient,
  collection: UpdateCollection,
  id: string,
  body: JsonObject,
  draft: boolean | undefined,
  call: CallOptions,
): Promise<UpdatePlan | null> {
  if (!VERSIONED.has(collection) || draft === true || '_status' in body) return null;
  const published = await readVersion(client, collection, id, false, call);
  const latest = await readVersion(client, collection, id, true, call);
  const step = (b: JsonObject, d: boolean, mirror: boolean, allLocales = false): UpdateStep => ({
    body: b,
    draft: d,
    allLocales,
    mirror,
  });
  if (!published) {
    if (!latest) return null;
    return { steps: [step(body, true, true)], wasPublished: false, pendingDraft: false };
  }
  const publish = { ...body, _status: 'published' };
  if (latest?._status !== 'draft') {
    return { steps: [step(publish, false, true)], wasPublished: true, pendingDraft: false };
  }
  const carried = carriedFields(collection);
  const differing = [...new Set([...Object.keys(published), ...Object.keys(latest)])]
    .filter((k) => !NOT_CARRIED.has(k) && !carried.has(k) && !sameJson(published[k], latest[k]))
    .sort();
  if (differing.length > 0) {
    throw new UnderstudyError(
      'US_VALIDATION',
      `refused before sending: ${collection} ${id} has a pending draft whose ${differing.join(', ')} ` +
        `differ${differing.length === 1 ? 's' : ''} from its published version, and an update cannot carry ` +
        `${differing.length === 1 ? 'that field' : 'those fields'} (a Payload-style upstream applies an update onto ` +
        'the latest version, so the draft would go live). Publish or discard the draft first, or write the draft ' +
        '(draft=true) (see docs/writes.md, "An update of a versioned record")',
    );
  }
  return {
    steps: [
      step({ ...pick(published, carried), _status: 'published' }, false, false, true),
      step(publish, false, true),
      step(pick(latest, carried), true, false, true),
      step(body, true, true),
    ],
    wasPublished: true,
    pendingDraft: true,
  };
}
