import { describeError, UnderstudyError, UpstreamError } from '../errors.js';
import { isJsonObject, type JsonObject, type JsonValue, recordId } from '../ids.js';
import type { Logger } from '../log.js';
import { type CollectionSlug, NATURAL_KEY, VERSIONED } from '../partners/collections.js';
import type { BulkResult, CallOptions, PartnersClient, UpstreamDoc } from '../partners/partners-client.js';
import { docKey } from '../store/extract-row.js';
import { PUBLISHED, type Store, type SyncKey } from '../store/store.js';
import type { BulkFailure } from '../store/write-log.js';
import { type BulkJob, type CreateJob, routeOf, type WriteJobData } from './write-job.js';

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
  const { client } = deps;
  const call: CallOptions = { signal: opts.signal };
  const route = routeOf(data);
  switch (data.op) {
    case 'create': {
      if (opts.priorUnknown) {
        const found = await findCreated(deps, data, call);
        if (found) {
          const mirrorError = await mirrorDoc(deps, data.collection, data.draft === true, found);
          return withMirror(
            { status: 'ok', resultId: docKey(data.collection, found), note: 'found after unknown outcome' },
            mirrorError,
          );
        }
      }
      const doc = await client.create(data.collection, data.body, draftQuery(data.draft), call);
      const mirrorError = await mirrorDoc(deps, data.collection, data.draft === true, doc);
      return withMirror({ status: 'ok', resultId: docKey(data.collection, doc) }, mirrorError);
    }
    case 'update': {
      const method = route.method === 'PUT' ? 'PUT' : 'PATCH';
      const doc = await client.update(
        data.collection,
        recordId(data.id),
        method,
        data.body,
        draftQuery(data.draft),
        call,
      );
      const mirrorError = await mirrorDoc(deps, data.collection, data.draft === true, doc);
      return withMirror({ status: 'ok', resultId: docKey(data.collection, doc) ?? data.id }, mirrorError);
    }
    case 'delete': {
      let note: string | undefined;
      try {
        await client.delete(data.collection, recordId(data.id), call);
      } catch (err) {
        // The earlier attempt may have deleted it: a 404 now means the delete is done.
        if (!(opts.priorUnknown && err instanceof UpstreamError && err.status === 404)) throw err;
        note = 'already gone after unknown outcome';
      }
      let mirrorError: string | undefined;
      try {
        const key: SyncKey = { tenant: client.tenant, collection: data.collection, variant: PUBLISHED };
        await deps.store.markDeleted(key, data.id, (deps.now?.() ?? new Date()).toISOString());
      } catch (err) {
        mirrorError = describeError(err);
        deps.log.warn({ err: mirrorError, collection: data.collection }, 'delete applied, mirror not updated');
      }
      return withMirror({ status: 'ok', resultId: data.id, ...(note ? { note } : {}) }, mirrorError);
    }
    case 'bulk':
      return applyBulk(deps, data, opts);
  }
}

const draftQuery = (draft: boolean | undefined) => (draft ? { draft: true } : {});

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

/** Writes a record returned by the upstream into the mirror; returns why it could not, or undefined. */
async function mirrorDoc(
  deps: WriteDeps,
  collection: CollectionSlug,
  draft: boolean,
  doc: UpstreamDoc,
): Promise<string | undefined> {
  if (draft && !deps.mirrorDrafts) return undefined;
  try {
    const key: SyncKey = { tenant: deps.client.tenant, collection, variant: draft ? 'draft' : PUBLISHED };
    await deps.store.upsertDocs(key, [doc]);
    return undefined;
  } catch (err) {
    const message = describeError(err);
    deps.log.warn({ err: message, collection }, 'write applied, mirror not updated');
    return message;
  }
}

/**
 * Looks for the record an earlier create may have made, by its natural key (slug; filename for media): through
 * the list route with `where`, or in the mirror when the upstream has no list route for the collection.
 * Returns null when it is not there or the body has no natural key to look by.
 */
export async function findCreated(deps: WriteDeps, data: CreateJob, call: CallOptions): Promise<UpstreamDoc | null> {
  const field = NATURAL_KEY[data.collection];
  const value = field ? data.body[field] : undefined;
  if (!field || (typeof value !== 'string' && typeof value !== 'number')) {
    throw new UnderstudyError(
      'US_VALIDATION',
      `create of ${data.collection} went out without an answer and its body has no ${field ?? 'natural key'} ` +
        'to look it up by: not sent again blindly (check upstream, then `understudy writes retry`)',
    );
  }
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
  const key: SyncKey = { tenant: deps.client.tenant, collection: data.collection, variant: PUBLISHED };
  await deps.store.scanDocs(key, (doc) => {
    if (!hit && doc[field] === value) hit = doc;
  });
  return hit;
}
