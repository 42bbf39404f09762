import { UnderstudyError } from '../errors.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import { isJsonObject, type JsonObject } from '../vocabulary/ids.js';
import type { Prng } from './prng.js';
import { GENERATORS } from './sim-content.js';
import { type CollectionData, clone, nextStamp, runtimeContext, type TenantData } from './sim-db.js';
import { iso } from './sim-doc-parts.js';

export interface MutateSpec {
  tenant: string;
  collection: CollectionSlug;
  creates?: number;
  edits?: number;
  deletes?: number;
  /** All created and edited records share one updatedAt. */
  sameUpdatedAt?: boolean;
  /**
   * Created and edited records get exactly this updatedAt (any string, e.g. one in 2099, or null), without
   * moving the clock: later ordinary edits are dated now.
   */
  updatedAt?: string | null;
}

export interface MutateResult {
  created: string[];
  edited: string[];
  deleted: string[];
}

/** A visible change to a stored document (title, name, alt or a nested field), counted by `rev`. */
const edit = (c: CollectionSlug, doc: JsonObject, rev: number): JsonObject => {
  const d = clone(doc);
  for (const f of ['title', 'name', 'alt']) {
    const v = d[f];
    if (isJsonObject(v) && typeof v.en === 'string') {
      v.en = `${v.en.replace(/ \(rev \d+\)$/, '')} (rev ${rev})`;
      return d;
    }
  }
  if (c === 'event-instances' && isJsonObject(d.ticketingA)) {
    d.ticketingA.availability = ['good', 'limited', 'soldOut'][rev % 3] ?? 'good';
  } else if (c === 'redirects' && isJsonObject(d.to)) {
    d.to.url = `/whats-on/rev-${rev}`;
  }
  return d;
};

/** The `updatedAt` a mutation forces, when it forces one: a string or null; anything else is refused. */
function forcedStamp(spec: MutateSpec): { given: false } | { given: true; value: string | null } {
  if (!('updatedAt' in spec) || spec.updatedAt === undefined) return { given: false };
  const v: unknown = spec.updatedAt;
  if (v !== null && typeof v !== 'string')
    throw new UnderstudyError('US_VALIDATION', 'updatedAt must be a string (ISO 8601) or null');
  return { given: true, value: v };
}

/** Up to `n` ids not chosen before (recorded in `chosen`), drawn from `prng`; none once every id is taken. */
function pickDistinct(ids: readonly string[], prng: Prng, chosen: Set<string>, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n && chosen.size < ids.length; i++) {
    for (;;) {
      const id = ids[prng.int(0, ids.length - 1)] as string;
      if (chosen.has(id)) continue;
      chosen.add(id);
      out.push(id);
      break;
    }
  }
  return out;
}

/** How a mutation dates what it writes: a forced stamp, else one shared instant (`sameUpdatedAt`), else the clock. */
interface Stamps {
  readonly forced: ReturnType<typeof forcedStamp>;
  readonly shared: string | null;
  readonly now: number;
}

/** Edits the records, each visibly (counted by `rev`) and dated forward; a superseded or forced-over draft goes. */
function editRecords(data: CollectionData, c: CollectionSlug, ids: readonly string[], st: Stamps, rev: () => number) {
  const edited: string[] = [];
  for (const id of ids) {
    const rec = data.byId.get(id);
    if (!rec) continue;
    const next = edit(c, rec.main, rev());
    next.updatedAt = st.forced.given
      ? st.forced.value
      : (st.shared ?? nextStamp(st.now, [rec.main.updatedAt, rec.draft?.updatedAt]));
    rec.main = next;
    const superseded = Date.parse(String(rec.draft?.updatedAt)) <= Date.parse(String(next.updatedAt));
    if (rec.draft && (st.forced.given || superseded)) rec.draft = null;
    edited.push(id);
  }
  return edited;
}

/** Creates `n` published records from the collection's generator. */
function createRecords(t: TenantData, c: CollectionSlug, n: number, prng: Prng, st: Stamps): string[] {
  const data = t.collections[c];
  const ctx = runtimeContext(t, prng, st.now);
  const created: string[] = [];
  for (let i = 0; i < n; i++) {
    const doc = GENERATORS[c](ctx, data.nextIndex++);
    if (doc._status === 'draft') doc._status = 'published';
    const stamp = st.forced.given ? st.forced.value : (st.shared ?? iso(st.now));
    // A forced stamp never puts createdAt in the future or makes it null: such a record is created now.
    doc.createdAt =
      !st.forced.given || (typeof stamp === 'string' && Date.parse(stamp) <= st.now) ? stamp : iso(st.now);
    doc.updatedAt = stamp;
    data.put({ id: String(doc.id), main: doc, draft: null });
    created.push(String(doc.id));
  }
  return created;
}

/**
 * Creates, edits and deletes records deterministically (choices come from `prng`); each edit moves updatedAt
 * strictly forward; with `sameUpdatedAt` all created and edited records get one shared instant.
 */
export function mutate(t: TenantData, spec: MutateSpec, prng: Prng, now: number, rev: () => number): MutateResult {
  const forced = forcedStamp(spec);
  const data = t.collections[spec.collection];
  const ids = [...data.byId.keys()].sort();
  const chosen = new Set<string>();
  const deleted = pickDistinct(ids, prng, chosen, spec.deletes ?? 0);
  const editIds = pickDistinct(ids, prng, chosen, spec.edits ?? 0);
  // A forced stamp (a string or null) replaces the clock for this mutation only.
  const shared = spec.sameUpdatedAt
    ? nextStamp(
        now,
        editIds.map((id) => data.byId.get(id)?.main.updatedAt),
      )
    : null;
  const st: Stamps = { forced, shared, now };
  const edited = editRecords(data, spec.collection, editIds, st, rev);
  const created = createRecords(t, spec.collection, spec.creates ?? 0, prng, st);
  for (const id of deleted) data.remove(id);
  data.changed();
  return { created, edited, deleted };
}
