import { describeError, UnderstudyError, UpstreamError } from '../errors.js';
import type { Logger } from '../log.js';
import type { BulkResult, CallOptions, PartnersClient } from '../partners/partners-client.js';
import { docKey } from '../store/extract-row.js';
import { PUBLISHED, type Store, type SyncKey, type WriteBatch } from '../sync/store-port.js';
import { type CollectionSlug, NATURAL_KEY, VERSIONED } from '../vocabulary/collections.js';
import { isJsonObject, type JsonObject, type JsonValue, recordId, type UpstreamDoc } from '../vocabulary/ids.js';
import { planVersionedUpdate, type UpdatePlan } from './versioned-update.js';
import {
  type BulkJob,
  type CreateJob,
  type DeleteJob,
  routeOf,
  type UpdateJob,
  type WriteJobData,
} from './write-job.js';
import type { BulkFailure } from './write-log.js';

/** What applying a write needs: the tenant's client, the mirror, and how to bring the mirror up after a bulk write. */
export interface WriteDeps {
  readonly client: PartnersClient;
  readonly store: Store;
  readonly log: Logger;
  /** Whether the tenant mirrors drafts; draft results are written through only then. */
  readonly mirrorDrafts: boolean;
  /** Brings the mirror of a collection up to date after a bulk write (an incremental sync, inline or queued). */
  readonly afterBulk?: (collection: CollectionSlug, signal: AbortSignal) => Promise<void>;
  readonly now?: () => Date;
}

export interface ApplyOptions {
  readonly signal: AbortSignal;
  /** An earlier attempt went out without a usable answer: a create looks for its record before sending again. */
  readonly priorUnknown: boolean;
  /** The write job's id, logged as the `run_id` of the changes its write-through makes. */
  readonly jobId?: string;
}

/** How a write ended upstream and in the mirror. */
export type WriteOutcome =
  | {
      readonly status: 'ok';
      /** The id of the record written, when there is one. */
      readonly resultId: string | null;
      /** Set when the write ended another way than by its own answer, e.g. found after an unknown outcome. */
      readonly note?: string;
      /** Why the mirror could not be brought in step (the write itself succeeded). */
      readonly mirrorError?: string;
      readonly summary?: JsonObject;
    }
  | {
      readonly status: 'partial';
      readonly resultId: null;
      readonly failures: readonly BulkFailure[];
      readonly summary: JsonObject;
      readonly mirrorError?: string;
    };

const num = (v: JsonValue | undefined): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** The records of a bulk answer that failed, with the upstream's error for each. */
export function bulkFailures(result: BulkResult): BulkFailure[] {
  const results = Array.isArray(result.results) ? result.results : [];
  return results.flatMap((r) => {
    if (!isJsonObject(r)) return [];
    const error = isJsonObject(r.error) ? r.error : null;
    if (!error && r.status !== 'failed' && r.status !== 'error') return [];
    const id = typeof r.id === 'string' || typeof r.id === 'number' ? String(r.id) : '?';
    const status = error && typeof error.status === 'number' ? error.status : null;
    const message = error && typeof error.message === 'string' ? error.message : String(r.status ?? 'failed');
    return [{ id, status, message }];
  });
}

const summaryOf = (result: BulkResult): JsonObject => {
  const out: JsonObject = {};
  for (const k of ['dryRun', 'versionTarget', 'matched', 'updated', 'wouldUpdate', 'unchanged', 'failed']) {
    const v = result[k];
    if (v !== undefined) out[k] = v;
  }
  return out;
};

/**
 * Applies one write upstream and keeps the mirror in step: creates and updates upsert the returned record,
 * a delete marks the row deleted, a bulk write brings its collection up to date. Upstream failures are thrown
 * for the caller to classify; a mirror failure after a successful write is reported in `mirrorError`, never
 * thrown, since the write must not be sent again.
 */
export async function applyWrite(deps: WriteDeps, data: WriteJobData, opts: ApplyOptions): Promise<WriteOutcome> {
  // Every request of this write leaves after this instant: what it answers was read after it (a tombstone set
  // before it may be undone by the answer; one set after it may not).
  const sentAt = (deps.now?.() ?? new Date()).toISOString();
  switch (data.op) {
    case 'create':
      return applyCreate(deps, data, opts, sentAt);
    case 'update':
      return applyUpdate(deps, data, opts, sentAt);
    case 'delete':
      return applyDelete(deps, data, opts);
    case 'bulk':
      return applyBulk(deps, data, opts);
  }
}

/** A create, looked up first when an earlier attempt's outcome is unknown; the answer upserted into the mirror. */
async function applyCreate(
  deps: WriteDeps,
  data: CreateJob,
  opts: ApplyOptions,
  sentAt: string,
): Promise<WriteOutcome> {
  const call: CallOptions = { signal: opts.signal };
  if (opts.priorUnknown) {
    const found = await findCreated(deps, data, call);
    if (found) {
      const mirrorError = await mirrorDoc(deps, data.collection, data.draft === true, found, sentAt, opts);
      return withMirror(
        { status: 'ok', resultId: docKey(data.collection, found), note: 'found after unknown outcome' },
        mirrorError,
      );
    }
  }
  const doc = await deps.client.create(data.collection, data.body, writeQuery(data.collection, data.draft), call);
  const mirrorError = await mirrorDoc(deps, data.collection, data.draft === true, doc, sentAt, opts);
  return withMirror({ status: 'ok', resultId: docKey(data.collection, doc) }, mirrorError);
}

/** An update (PUT or PATCH, or a versioned update's plan); the answer upserted into the mirror. */
async function applyUpdate(
  deps: WriteDeps,
  data: UpdateJob,
  opts: ApplyOptions,
  sentAt: string,
): Promise<WriteOutcome> {
  const { client } = deps;
  const call: CallOptions = { signal: opts.signal };
  const method = routeOf(data).method === 'PUT' ? 'PUT' : 'PATCH';
  const plan = await planVersionedUpdate(client, data.collection, data.id, data.body, data.draft, call);
  if (plan) return applyPlannedUpdate(deps, data, plan, method, sentAt, opts);
  const answer = await client.update(
    data.collection,
    recordId(data.id),
    method,
    data.body,
    writeQuery(data.collection, data.draft),
    call,
  );
  const doc = TAKES_DEPTH(data.collection) ? answer : idsForRelationships(answer);
  const mirrorError = await mirrorDoc(deps, data.collection, data.draft === true, doc, sentAt, opts);
  return withMirror({ status: 'ok', resultId: docKey(data.collection, doc) ?? data.id }, mirrorError);
}

/** A delete (a 404 after an unknown outcome is one done); the row tombstoned in the mirror. */
async function applyDelete(deps: WriteDeps, data: DeleteJob, opts: ApplyOptions): Promise<WriteOutcome> {
  const { client } = deps;
  let note: string | undefined;
  try {
    await client.delete(data.collection, recordId(data.id), { signal: opts.signal });
  } catch (err) {
    // The earlier attempt may have deleted it: a 404 now means the delete is done.
    if (!(opts.priorUnknown && err instanceof UpstreamError && err.status === 404)) throw err;
    note = 'already gone after unknown outcome';
  }
  let mirrorError: string | undefined;
  try {
    const key: SyncKey = { tenant: client.tenant, collection: data.collection, variant: PUBLISHED };
    await deps.store.write(key, {
      deletes: [data.id],
      now: (deps.now?.() ?? new Date()).toISOString(),
      ...writeThrough(opts),
    });
  } catch (err) {
    mirrorError = describeError(err);
    deps.log.warn({ err: mirrorError, collection: data.collection }, 'delete applied, mirror not updated');
  }
  return withMirror({ status: 'ok', resultId: data.id, ...(note ? { note } : {}) }, mirrorError);
}

/** A write-through's change-log origin: source `write`, and the job's id. */
const writeThrough = (opts: ApplyOptions): Pick<WriteBatch, 'source' | 'runId'> => ({
  source: 'write',
  ...(opts.jobId ? { runId: opts.jobId } : {}),
});

const draftQuery = (draft: boolean | undefined) => (draft ? { draft: true } : {});

/** Write routes that take `depth` (the spec: the custom-attributes PUT takes only `select` and `populate`). */
const TAKES_DEPTH = (c: CollectionSlug): boolean => c !== 'custom-attributes';

/**
 * The query of a create or update: `depth=0` wherever the route takes it, so the answer has relationships as ids,
 * the shape sync reads (a Payload-style upstream populates them to depth 2 by default); `draft=true` for drafts.
 */
const writeQuery = (c: CollectionSlug, draft: boolean | undefined) => ({
  ...(TAKES_DEPTH(c) ? { depth: 0 } : {}),
  ...draftQuery(draft),
});

/** The id of a populated record in an answer (an object with an `id` and the timestamps records carry), else undefined. */
const populatedId = (v: JsonValue | undefined): JsonValue | undefined =>
  isJsonObject(v) &&
  (typeof v.id === 'string' || typeof v.id === 'number') &&
  (typeof v.updatedAt === 'string' || typeof v.createdAt === 'string')
    ? v.id
    : undefined;

const toId = (v: JsonValue): JsonValue => populatedId(v) ?? v;

/**
 * An answer from a route that cannot be asked for `depth=0`, brought to the depth-0 shape sync stores: each
 * top-level relationship (one populated record, or an array of them) becomes its id, and each joined field
 * (`{ docs: [...] }`) lists ids.
 */
export function idsForRelationships(doc: UpstreamDoc): UpstreamDoc {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(doc)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) out[k] = v.map(toId);
    else if (populatedId(v) !== undefined) out[k] = populatedId(v) as JsonValue;
    else if (isJsonObject(v) && Array.isArray(v.docs)) out[k] = { ...v, docs: v.docs.map(toId) };
    else out[k] = v;
  }
  return out as UpstreamDoc;
}

/**
 * Sends a planned update of a versioned record (`planVersionedUpdate`) step by step, writing through the answers
 * of the steps that carry the targeted fields. When a non-draft step comes back `_status: "draft"` for a record
 * that was published, the upstream has unpublished it: the rest is not sent, the outcome's note and a warning say
 * so, and the mirror follows the published read (the published row tombstoned as `unpublished` when that is 404).
 */
async function applyPlannedUpdate(
  deps: WriteDeps,
  data: UpdateJob,
  plan: UpdatePlan,
  method: 'PUT' | 'PATCH',
  sentAt: string,
  opts: ApplyOptions,
): Promise<WriteOutcome> {
  const call: CallOptions = { signal: opts.signal };
  const { collection } = data;
  const mirrorErrors: string[] = [];
  for (const step of plan.steps) {
    const q = { ...writeQuery(collection, step.draft), ...(step.allLocales ? { locale: 'all' } : {}) };
    const answer = await deps.client.update(collection, recordId(data.id), method, step.body, q, call);
    if (plan.wasPublished && !step.draft && answer._status === 'draft') {
      const note = await followUnpublished(deps, data, answer, sentAt, opts);
      return {
        status: 'ok',
        resultId: data.id,
        note: note.note,
        ...(note.mirrorError ? { mirrorError: note.mirrorError } : {}),
      };
    }
    if (step.mirror) {
      const err = await mirrorDoc(deps, collection, step.draft, answer, sentAt, opts);
      if (err) mirrorErrors.push(err);
    }
  }
  return withMirror({ status: 'ok', resultId: data.id }, mirrorErrors.length ? mirrorErrors.join('; ') : undefined);
}

/** The mirror after an update the upstream answered by unpublishing the record: as its published read says. */
async function followUnpublished(
  deps: WriteDeps,
  data: UpdateJob,
  answer: UpstreamDoc,
  sentAt: string,
  opts: ApplyOptions,
): Promise<{ note: string; mirrorError?: string }> {
  const { collection } = data;
  const tenant = deps.client.tenant;
  let published: UpstreamDoc | null = null;
  let mirrorError: string | undefined;
  try {
    published = await deps.client.getById(collection, recordId(data.id), { depth: 0 }, { signal: opts.signal });
  } catch (err) {
    if (!(err instanceof UpstreamError && err.status === 404 && err.code !== 'US_AUTH'))
      mirrorError = describeError(err);
  }
  const note =
    `UNPUBLISHED by the upstream: its answer to this update says _status "draft" for ${collection} ${data.id}, ` +
    `which was published; ${published ? 'its published read still answers' : 'its published read answers 404'} ` +
    '(see docs/writes.md, "An update of a versioned record")';
  deps.log.warn(
    { tenant, collection, id: data.id, published: published !== null },
    'update unpublished the record upstream',
  );
  if (mirrorError === undefined) {
    try {
      const key: SyncKey = { tenant, collection, variant: PUBLISHED };
      await deps.store.write(
        key,
        published
          ? { upserts: [published], fetchedAt: sentAt, ...writeThrough(opts) }
          : {
              deletes: [data.id],
              deleteReason: 'unpublished',
              now: (deps.now?.() ?? new Date()).toISOString(),
              ...writeThrough(opts),
            },
      );
    } catch (err) {
      mirrorError = describeError(err);
    }
  }
  const draftError = await mirrorDoc(deps, collection, true, answer, sentAt, opts);
  const errors = [mirrorError, draftError].filter((e): e is string => e !== undefined);
  return errors.length ? { note, mirrorError: errors.join('; ') } : { note };
}

function withMirror<T extends WriteOutcome>(outcome: T, mirrorError: string | undefined): T {
  return mirrorError === undefined ? outcome : { ...outcome, mirrorError };
}

async function applyBulk(deps: WriteDeps, data: BulkJob, opts: ApplyOptions): Promise<WriteOutcome> {
  const kind = routeOf(data).bulkKind;
  if (!kind) throw new UnderstudyError('US_VALIDATION', `${data.collection} has no bulk route`);
  const result = await deps.client.bulk(data.collection, kind, data.body as JsonObject, draftQuery(data.draft), {
    signal: opts.signal,
  });
  const failures = bulkFailures(result);
  const summary = summaryOf(result);
  let mirrorError: string | undefined;
  if (result.dryRun !== true && data.body.dryRun !== true && deps.afterBulk) {
    try {
      await deps.afterBulk(data.collection, opts.signal);
    } catch (err) {
      mirrorError = describeError(err);
      deps.log.warn({ err: mirrorError, collection: data.collection }, 'bulk write applied, mirror sync failed');
    }
  }
  if (failures.length > 0 || num(result.failed) > 0) {
    return withMirror({ status: 'partial', resultId: null, failures, summary }, mirrorError);
  }
  return withMirror({ status: 'ok', resultId: null, summary }, mirrorError);
}

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
async function mirrorDoc(
  deps: WriteDeps,
  collection: CollectionSlug,
  askedDraft: boolean,
  doc: UpstreamDoc,
  fetchedAt: string,
  opts: ApplyOptions,
): Promise<string | undefined> {
  const draft = answeredDraft(collection, askedDraft, doc);
  if (draft && !deps.mirrorDrafts) return undefined;
  try {
    const key: SyncKey = { tenant: deps.client.tenant, collection, variant: draft ? 'draft' : PUBLISHED };
    await deps.store.write(key, { upserts: [doc], fetchedAt, ...writeThrough(opts) });
    return undefined;
  } catch (err) {
    const message = describeError(err);
    deps.log.warn({ err: message, collection }, 'write applied, mirror not updated');
    return message;
  }
}

/** The field and value a create can be found again by (slug; filename for media), or null when its body has none. */
export function naturalKeyOf(data: CreateJob): { field: string; value: string | number } | null {
  const field = NATURAL_KEY[data.collection];
  const value = field ? data.body[field] : undefined;
  return field && (typeof value === 'string' || typeof value === 'number') ? { field, value } : null;
}

/** A create that may have been applied and cannot be looked up: never sent again on its own. */
export function outcomeUnknown(data: CreateJob, what: string): UnderstudyError {
  const field = NATURAL_KEY[data.collection] ?? 'natural key';
  return new UnderstudyError(
    'US_OUTCOME_UNKNOWN',
    `outcome unknown: ${what} of this create of ${data.collection} went out and no usable answer came, and its ` +
      `body has no ${field} to look the record up by, so it is not sent again on its own ` +
      '(see `understudy writes show`; `writes retry --resend` sends it again)',
  );
}

/**
 * Looks for the record an earlier create may have made, by its natural key (slug; filename for media): through
 * the list route with `where`, or in the mirror when the upstream has no list route for the collection.
 * Returns null when it is not there or the body has no natural key to look by.
 */
export async function findCreated(deps: WriteDeps, data: CreateJob, call: CallOptions): Promise<UpstreamDoc | null> {
  const natural = naturalKeyOf(data);
  if (!natural) throw outcomeUnknown(data, 'an earlier attempt');
  const { field, value } = natural;
  try {
    const page = await deps.client.listPage(
      {
        collection: data.collection,
        where: { [field]: { equals: value } },
        limit: 1,
        depth: 0,
        // A create without `_status` makes a draft in a drafts-enabled collection (Payload's default), which
        // published reads do not see: look with draft=true there (it finds published records too).
        ...(data.draft || VERSIONED.has(data.collection) ? { draft: true } : {}),
      },
      call,
    );
    return page.docs[0] ?? null;
  } catch (err) {
    const noRoute =
      err instanceof UpstreamError && (err.status === 404 || err.status === 405) && err.code !== 'US_AUTH';
    if (!noRoute) throw err;
  }
  let hit: UpstreamDoc | null = null;
  // The published table, then the drafts (the record may be one).
  for (const variant of [PUBLISHED, 'draft'] as const) {
    const key: SyncKey = { tenant: deps.client.tenant, collection: data.collection, variant };
    await deps.store.scanDocs(key, (doc) => {
      if (!hit && doc[field] === value) hit = doc;
    });
    if (hit) break;
  }
  return hit;
}
