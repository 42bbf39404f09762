import { UnderstudyError } from '../errors.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import { isJsonObject, type JsonObject } from '../vocabulary/ids.js';
import type { Prng } from './prng.js';
import { GENERATORS } from './sim-content.js';
import { clone, nextStamp, runtimeContext, type TenantData } from './sim-db.js';
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

/**
 * Creates, edits and deletes records deterministically (choices come from `prng`); each edit moves updatedAt
 * strictly forward; with `sameUpdatedAt` all created and edited records get one shared instant.
 */
export function mutate(t: TenantData, spec: MutateSpec, prng: Prng, now: number, rev: () => number): MutateResult {
  const forced = forcedStamp(spec);
  const data = t.collections[spec.collection];
  const result: MutateResult = { created: [], edited: [], deleted: [] };
  const ids = [...data.byId.keys()].sort();
  const chosen = new Set<string>();
  const choose = (): string | undefined => {
    if (chosen.size >= ids.length) return undefined;
    for (;;) {
      const id = ids[prng.int(0, ids.length - 1)] as string;
      if (!chosen.has(id)) {
        chosen.add(id);
        return id;
      }
    }
  };
  const deleteIds: string[] = [];
  for (let i = 0; i < (spec.deletes ?? 0); i++) {
    const id = choose();
    if (id) deleteIds.push(id);
  }
  const editIds: string[] = [];
  for (let i = 0; i < (spec.edits ?? 0); i++) {
    const id = choose();
    if (id) editIds.push(id);
  }
  // A forced stamp (a string or null) replaces the clock for this mutation only.
  const shared: string | null = spec.sameUpdatedAt
    ? nextStamp(
        now,
        editIds.map((id) => data.byId.get(id)?.main.updatedAt),
      )
    : null;
  for (const id of editIds) {
    const rec = data.byId.get(id);
    if (!rec) continue;
    const next = edit(spec.collection, rec.main, rev());
    next.updatedAt = forced.given
      ? forced.value
      : (shared ?? nextStamp(now, [rec.main.updatedAt, rec.draft?.updatedAt]));
    rec.main = next;
    const superseded = Date.parse(String(rec.draft?.updatedAt)) <= Date.parse(String(next.updatedAt));
    if (rec.draft && (forced.given || superseded)) rec.draft = null;
    result.edited.push(id);
  }
  const ctx = runtimeContext(t, prng, now);
  for (let i = 0; i < (spec.creates ?? 0); i++) {
    const doc = GENERATORS[spec.collection](ctx, data.nextIndex++);
    if (doc._status === 'draft') doc._status = 'published';
    const stamp = forced.given ? forced.value : (shared ?? iso(now));
    // A forced stamp never puts createdAt in the future or makes it null: such a record is created now.
    doc.createdAt = !forced.given || (typeof stamp === 'string' && Date.parse(stamp) <= now) ? stamp : iso(now);
    doc.updatedAt = stamp;
    data.put({ id: String(doc.id), main: doc, draft: null });
    result.created.push(String(doc.id));
  }
  for (const id of deleteIds) {
    data.remove(id);
    result.deleted.push(id);
  }
  data.changed();
  return result;
}
