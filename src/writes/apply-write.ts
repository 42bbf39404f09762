import { describeError, hasCode, isUpstreamError, UnderstudyError } from '../errors.js';
import type { BulkResult, CallOptions } from '../partners/partners-client.js';
import { docKey } from '../store/extract-row.js';
import { PUBLISHED, type SyncKey } from '../sync/store-port.js';
import { NATURAL_KEY, VERSIONED } from '../vocabulary/collections.js';
import { isJsonObject, type JsonObject, type JsonValue, recordId, type UpstreamDoc } from '../vocabulary/ids.js';
import { applyVersionedUpdate } from './versioned-sequence.js';
import {
  type BulkJob,
  type CreateJob,
  type DeleteJob,
  routeOf,
  type UpdateJob,
  type WriteJobData,
} from './write-job.js';
import type { BulkFailure } from './write-log.js';
import { type ApplyOptions, type WriteDeps, type WriteOutcome, withMirror } from './write-outcome.js';
import { draftQuery, mirrorDoc, TAKES_DEPTH, writeQuery, writeThrough } from './write-through.js';

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

/** An update (PUT or PATCH, or a versioned update's sequence); the answer upserted into the mirror. */
async function applyUpdate(
  deps: WriteDeps,
  data: UpdateJob,
  opts: ApplyOptions,
  sentAt: string,
): Promise<WriteOutcome> {
  const { client } = deps;
  const call: CallOptions = { signal: opts.signal };
  const method = routeOf(data).method === 'PUT' ? 'PUT' : 'PATCH';
  const versioned = await applyVersionedUpdate(deps, data, opts, sentAt);
  if (versioned) return versioned;
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
    if (!(opts.priorUnknown && hasCode(err, 'US_NOT_FOUND'))) throw err;
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
    const noRoute = hasCode(err, 'US_NOT_FOUND') || (isUpstreamError(err) && err.status === 405);
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
