import { describeError } from '../errors.js';
import { PUBLISHED, type SyncKey, type Variant, type WriteBatch } from '../sync/store-port.js';
import { type CollectionSlug, VERSIONED } from '../vocabulary/collections.js';
import type { UpstreamDoc } from '../vocabulary/ids.js';
import type { ApplyOptions, WriteDeps } from './write-outcome.js';

// How a write's answers reach the mirror: the query that makes them come back in the shape sync stores, and the
// row they go to.

/** A write-through's change-log origin: source `write`, and the job's id. */
export const writeThrough = (opts: ApplyOptions): Pick<WriteBatch, 'source' | 'runId'> => ({
  source: 'write',
  ...(opts.jobId ? { runId: opts.jobId } : {}),
});

export const draftQuery = (draft: boolean | undefined) => (draft ? { draft: true } : {});

/** Write routes that take `depth` (the spec: the custom-attributes PUT takes only `select` and `populate`). */
export const TAKES_DEPTH = (c: CollectionSlug): boolean => c !== 'custom-attributes';

/**
 * The query of a create or update: `depth=0` wherever the route takes it, so the answer has relationships as ids,
 * the shape sync reads (a Payload-style upstream populates them to depth 2 by default); `draft=true` for drafts.
 */
export const writeQuery = (c: CollectionSlug, draft: boolean | undefined) => ({
  ...(TAKES_DEPTH(c) ? { depth: 0 } : {}),
  ...draftQuery(draft),
});

/**
 * Whether the upstream's answer is a draft: its `_status` when it has one (a Payload-style upstream creates a draft
 * unless the body says `_status: "published"`), else whether the write asked for the draft.
 */
export const answeredDraft = (collection: CollectionSlug, askedDraft: boolean, doc: UpstreamDoc): boolean => {
  if (!VERSIONED.has(collection)) return false;
  const status = doc._status;
  return status === 'draft' || status === 'published' ? status === 'draft' : askedDraft;
};

/**
 * Writes a record returned by the upstream into the mirror, filed by the `_status` it came back with: a draft goes
 * to the draft variant, or nowhere when the tenant does not mirror drafts. Returns why it could not, or undefined.
 */
export async function mirrorDoc(
  deps: WriteDeps,
  collection: CollectionSlug,
  askedDraft: boolean,
  doc: UpstreamDoc,
  fetchedAt: string,
  opts: ApplyOptions,
): Promise<string | undefined> {
  const draft = answeredDraft(collection, askedDraft, doc);
  if (draft && !deps.mirrorDrafts) return undefined;
  return mirrorVariant(deps, collection, draft ? 'draft' : PUBLISHED, doc, fetchedAt, opts);
}

/** Writes a record into one variant of the mirror (newer wins); returns why it could not, or undefined. */
export async function mirrorVariant(
  deps: WriteDeps,
  collection: CollectionSlug,
  variant: Variant,
  doc: UpstreamDoc,
  fetchedAt: string,
  opts: ApplyOptions,
): Promise<string | undefined> {
  try {
    const key: SyncKey = { tenant: deps.client.tenant, collection, variant };
    await deps.store.write(key, { upserts: [doc], fetchedAt, ...writeThrough(opts) });
    return undefined;
  } catch (err) {
    const message = describeError(err);
    deps.log.warn({ err: message, collection }, 'write applied, mirror not updated');
    return message;
  }
}
