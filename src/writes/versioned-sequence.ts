import { describeError, hasCode } from '../errors.js';
import type { CallOptions, Reservation } from '../partners/partners-client.js';
import { docKey } from '../store/extract-row.js';
import { PUBLISHED, type SyncKey } from '../sync/store-port.js';
import { VERSIONED } from '../vocabulary/collections.js';
import { isJsonObject, recordId, type UpstreamDoc } from '../vocabulary/ids.js';
import {
  bodyFields,
  carriedBy,
  driftedFields,
  pick,
  planVersionedUpdate,
  readVersion,
  readVersions,
  restoreSteps,
  type UpdateStep,
  type Versions,
} from './versioned-update.js';
import { routeOf, type UpdateJob } from './write-job.js';
import { type ApplyOptions, type WriteDeps, type WriteOutcome, withMirror } from './write-outcome.js';
import { mirrorDoc, mirrorVariant, writeQuery, writeThrough } from './write-through.js';

// Sends an update of a versioned record as versioned-update.ts plans it, in as short a window as the key allows: the
// whole sequence's budget is taken at the gate before its first read, so its requests leave back to back. An editor
// may still save between them (the upstream has no conditional write), so what comes back is compared with what was
// planned, read back after, repaired when an editor's draft went live, and reported (docs/writes.md, "An editor
// saving while an update runs").

/** What a sequence takes at the gate before its first read: two writes, two reads before them and two after. */
const BUDGET = { write: 2, read: 4 } as const;

/** One sequence in flight. */
interface Sequence {
  readonly deps: WriteDeps;
  readonly data: UpdateJob;
  readonly opts: ApplyOptions;
  readonly sentAt: string;
  readonly reservation: Reservation;
}

/** The answer of each request sent, in order. */
interface Sent {
  readonly step: UpdateStep;
  readonly answer: UpstreamDoc;
}

/** What the sequence saw of an editor's concurrent edit. */
interface Interleaved {
  /** Fields in which a publishing answer held none of the published version's values: a draft's went live. */
  readonly leaked: readonly string[];
  /** Of those, the fields still live after the repair (not writable through the update's route). */
  readonly leftover: readonly string[];
  /** Fields in which the draft changed between the reads and the draft request. */
  readonly draftDrift: readonly string[];
  /** A draft newer than the one the sequence wrote was read back. */
  readonly newerDraft: boolean;
  /** The published version changed after the sequence's last publishing request. */
  readonly publishedMoved: boolean;
}

/**
 * Applies an update of a versioned record that is not a draft write and does not set `_status` itself; null for any
 * other update (sent as asked by the caller).
 */
export async function applyVersionedUpdate(
  deps: WriteDeps,
  data: UpdateJob,
  opts: ApplyOptions,
  sentAt: string,
): Promise<WriteOutcome | null> {
  if (!VERSIONED.has(data.collection) || data.draft === true || '_status' in data.body) return null;
  const reservation = await deps.client.reserve(BUDGET, { signal: opts.signal });
  try {
    return await runSequence({ deps, data, opts, sentAt, reservation });
  } finally {
    reservation.release();
  }
}

async function runSequence(s: Sequence): Promise<WriteOutcome> {
  const { deps, data, reservation } = s;
  const read = await readVersions(deps.client, data.collection, data.id, true, reservation.call);
  const resumed = resumeFrom(s.opts, read);
  const versions = resumed?.versions ?? read;
  const plan = planVersionedUpdate(data.collection, data.id, data.body, versions);
  if (plan.kind === 'as-asked') return sendAsAsked(s);
  const { published, latest } = versions;
  if (plan.kind === 'published' && latest) {
    await s.opts.checkpoint?.save({ draft: plan.pendingDraft ? pick(latest, plan.restored) : null });
  }
  const sent = await sendSteps(s, plan.steps, published !== null);
  if (!Array.isArray(sent)) return sent;
  if (plan.kind === 'draft-only' || !published || !latest) return mirrorLast(s, sent);
  const skip = bodyFields(data.body);
  const leaked = fieldsOf(sent, false, (a) => driftedFields(a, published, skip));
  const draftDrift = plan.pendingDraft ? fieldsOf(sent, true, (a) => driftedFields(a, latest, skip)) : [];
  if (!plan.pendingDraft && leaked.length === 0 && !resumed) return mirrorLast(s, sent);
  const repaired = leaked.length > 0 ? await repairLeak(s, published, leaked) : { sent: [], leftover: [] };
  const seen = { leaked, leftover: repaired.leftover, draftDrift };
  return settle(s, [...sent, ...repaired.sent], seen, resumed);
}

/** How an attempt after one cut off mid-sequence goes on: the versions to plan from, and whether it restored the draft. */
interface Resumed {
  readonly versions: Versions;
  /** The pending draft the cut-off attempt read was gone (its first write superseded it), and is planned back. */
  readonly draftRestored: boolean;
}

/**
 * An attempt after one that went out without a usable answer, having saved its checkpoint (so its sequence may have
 * been cut off between two requests). The sequence runs again from the versions as they stand; when the pending draft
 * the earlier attempt read is gone (its first write superseded it, and it died before writing the draft back), the
 * draft it saved is planned back over the published version. Null when this attempt is not such a one.
 */
function resumeFrom(opts: ApplyOptions, read: Versions): Resumed | null {
  const saved = opts.checkpoint?.saved;
  if (!opts.priorUnknown || !saved) return null;
  const draft = isJsonObject(saved.draft) ? saved.draft : null;
  const { published, latest } = read;
  if (!draft || !published || !latest || latest._status === 'draft' || Object.keys(draft).length === 0) {
    return { versions: read, draftRestored: false };
  }
  return { versions: { published, latest: { ...latest, ...draft, _status: 'draft' } }, draftRestored: true };
}

/** The sorted union of `f` over the answers of the draft (or publishing) requests sent. */
const fieldsOf = (sent: readonly Sent[], draft: boolean, f: (answer: UpstreamDoc) => string[]): string[] =>
  [...new Set(sent.filter((x) => x.step.draft === draft).flatMap((x) => f(x.answer)))].sort();

/** The update sent as asked (neither version was found: the upstream says why), its answer written through. */
async function sendAsAsked(s: Sequence): Promise<WriteOutcome> {
  const { deps, data } = s;
  const method = routeOf(data).method === 'PUT' ? 'PUT' : 'PATCH';
  const q = writeQuery(data.collection, data.draft);
  const answer = await deps.client.update(data.collection, recordId(data.id), method, data.body, q, s.reservation.call);
  const mirrorError = await mirrorDoc(deps, data.collection, data.draft === true, answer, s.sentAt, s.opts);
  return withMirror({ status: 'ok', resultId: docKey(data.collection, answer) ?? data.id }, mirrorError);
}

/**
 * Sends the steps back to back (taking more of the budget first when there are more than planned). When a publishing
 * step comes back `_status: "draft"` for a record that was published, the upstream has unpublished it: the rest is
 * not sent, and the outcome says so.
 */
async function sendSteps(
  s: Sequence,
  steps: readonly UpdateStep[],
  wasPublished: boolean,
): Promise<Sent[] | WriteOutcome> {
  const { deps, data, reservation } = s;
  const extra = steps.length - BUDGET.write;
  if (extra > 0) await reservation.extend({ write: extra });
  const method = routeOf(data).method === 'PUT' ? 'PUT' : 'PATCH';
  const sent: Sent[] = [];
  for (const step of steps) {
    const q = { ...writeQuery(data.collection, step.draft), ...(step.allLocales ? { locale: 'all' } : {}) };
    const answer = await deps.client.update(data.collection, recordId(data.id), method, step.body, q, reservation.call);
    if (wasPublished && !step.draft && answer._status === 'draft') {
      const followed = await followUnpublished(deps, data, answer, s.sentAt, s.opts, reservation.call);
      return withMirror({ status: 'ok', resultId: data.id, note: followed.note }, followed.mirrorError);
    }
    sent.push({ step, answer });
  }
  return sent;
}

/** A sequence nobody interleaved with and that left no draft to re-read: its last answer written through. */
async function mirrorLast(s: Sequence, sent: readonly Sent[]): Promise<WriteOutcome> {
  const last = sent.at(-1);
  const mirrorError = last
    ? await mirrorDoc(s.deps, s.data.collection, last.step.draft, last.answer, s.sentAt, s.opts)
    : undefined;
  return withMirror({ status: 'ok', resultId: s.data.id }, mirrorError);
}

/**
 * An editor's draft went live through a publishing request (Payload applies it onto the latest version, which the
 * editor's save had just made theirs). Reads the latest version again, then puts the published version back as it
 * was with the body, and makes the editor's newest draft the latest again with the body: the fields in which either
 * differs from the published version, as far as the route can carry them.
 */
async function repairLeak(
  s: Sequence,
  published: UpstreamDoc,
  leaked: readonly string[],
): Promise<{ sent: Sent[]; leftover: string[] }> {
  const { deps, data, reservation } = s;
  await reservation.extend({ write: 2, read: 1 });
  const call = reservation.call;
  const latest = await readVersion(deps.client, data.collection, data.id, { draft: true, allLocales: true }, call);
  if (!latest) return { sent: [], leftover: [...leaked] };
  const skip = bodyFields(data.body);
  const editor = carriedBy(data.collection, driftedFields(latest, published, skip));
  const fields = carriedBy(data.collection, [...new Set([...editor, ...leaked])]);
  const both = [published, latest];
  const steps = [
    ...restoreSteps(both, published, fields, data.body, { draft: false, status: { _status: 'published' } }),
    ...(editor.length > 0 ? restoreSteps(both, latest, editor, data.body, { draft: true }) : []),
  ];
  const sent = await sendSteps(s, steps, true);
  if (!Array.isArray(sent)) return { sent: [], leftover: [...leaked] };
  const leftover = fieldsOf(sent, false, (a) => driftedFields(a, published, skip));
  return { sent, leftover };
}

/** Whether `a` was saved after `b` (by `updatedAt`; false when either has none). */
const newer = (a: UpstreamDoc | null | undefined, b: UpstreamDoc | undefined): boolean => {
  const at = Date.parse(String(a?.updatedAt ?? ''));
  const bt = Date.parse(String(b?.updatedAt ?? ''));
  return Number.isFinite(at) && Number.isFinite(bt) && at > bt;
};

/**
 * Reads both versions back (as the mirror stores them) and writes them into the mirror, the draft variant included:
 * what an editor saved meanwhile is seen, and the mirror's draft never stays as it was before the update. The outcome
 * carries a `CONCURRENT_EDIT` note, and a warning is logged, when an edit interleaved.
 */
async function settle(
  s: Sequence,
  sent: readonly Sent[],
  seen: Pick<Interleaved, 'leaked' | 'leftover' | 'draftDrift'>,
  resumed: Resumed | null,
): Promise<WriteOutcome> {
  const { deps, data } = s;
  const back = await readVersions(deps.client, data.collection, data.id, false, s.reservation.call);
  const lastOf = (draft: boolean) => sent.filter((x) => x.step.draft === draft).at(-1)?.answer;
  const found: Interleaved = {
    ...seen,
    newerDraft: back.latest?._status === 'draft' && newer(back.latest, lastOf(true)),
    publishedMoved: newer(back.published, lastOf(false)),
  };
  const mirrorError = await mirrorVersions(s, back);
  const concurrent = concurrentNote(data, found);
  const where = { tenant: deps.client.tenant, collection: data.collection, id: data.id };
  if (concurrent) deps.log.warn({ ...where, leaked: found.leaked }, 'concurrent edit during an update');
  if (resumed)
    deps.log.warn({ ...where, draftRestored: resumed.draftRestored }, 'update resumed after a cut-off attempt');
  const note = [concurrent, resumed ? resumedNote(resumed) : null].filter(Boolean).join('. ');
  return withMirror({ status: 'ok', resultId: data.id, ...(note ? { note } : {}) }, mirrorError);
}

/**
 * The versions read back, into the mirror: the published row, and the draft variant (with `drafts`) as sync keeps it:
 * the latest version, a draft or the published version when no draft is pending.
 */
async function mirrorVersions(s: Sequence, back: Versions): Promise<string | undefined> {
  const { deps, data, sentAt, opts } = s;
  const errors: string[] = [];
  if (back.published) {
    const err = await mirrorVariant(deps, data.collection, PUBLISHED, back.published, sentAt, opts);
    if (err) errors.push(err);
  }
  if (back.latest && deps.mirrorDrafts) {
    const err = await mirrorVariant(deps, data.collection, 'draft', back.latest, sentAt, opts);
    if (err) errors.push(err);
  }
  return errors.length > 0 ? errors.join('; ') : undefined;
}

/** The job's note for an attempt that went on from one cut off mid-sequence. */
const resumedNote = (r: Resumed): string =>
  'RESUMED: an earlier attempt of this update was cut off mid-sequence, so it ran again from the versions as they ' +
  'now stand' +
  (r.draftRestored
    ? "; the pending draft that attempt read was gone (its first write superseded it) and was made the latest draft again, with the update's fields"
    : '');

const list = (fields: readonly string[]) => fields.join(', ');

/** The job's note for an edit that interleaved with the sequence, or null when none did. */
function concurrentNote(data: UpdateJob, f: Interleaved): string | null {
  const parts: string[] = [];
  if (f.leaked.length > 0) {
    parts.push(
      `its publishing request took ${list(f.leaked)} from an editor's draft saved meanwhile; the published ` +
        "version was put back as it was, with the update's fields, and the editor's draft made the latest again, " +
        'with them too' +
        (f.leftover.length > 0
          ? `, but ${list(f.leftover)} could not be put back through this route (still live: see docs/writes.md)`
          : ''),
    );
  } else if (f.draftDrift.length > 0) {
    parts.push(
      `the draft changed between its reads and its draft request (${list(f.draftDrift)}): the editor's draft is ` +
        "kept as the latest, with the update's fields",
    );
  }
  if (f.newerDraft) parts.push('a newer draft was saved after its requests: kept as the latest draft');
  if (f.publishedMoved) parts.push('the published version changed after its requests: left as it is');
  if (parts.length === 0) return null;
  return `CONCURRENT_EDIT: an edit of ${data.collection} ${data.id} interleaved with this update: ${parts.join('; ')}`;
}

/** The mirror after an update the upstream answered by unpublishing the record: as its published read says. */
async function followUnpublished(
  deps: WriteDeps,
  data: UpdateJob,
  answer: UpstreamDoc,
  sentAt: string,
  opts: ApplyOptions,
  call: CallOptions,
): Promise<{ note: string; mirrorError?: string }> {
  const { collection } = data;
  const tenant = deps.client.tenant;
  let published: UpstreamDoc | null = null;
  let mirrorError: string | undefined;
  try {
    published = await deps.client.getById(collection, recordId(data.id), { depth: 0 }, call);
  } catch (err) {
    if (!hasCode(err, 'US_NOT_FOUND')) mirrorError = describeError(err);
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
