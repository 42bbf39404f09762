import { COLLECTIONS, type CollectionSlug, VERSIONED } from '../vocabulary/collections.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../vocabulary/ids.js';
import { IdMaker, Prng } from './prng.js';
import { countFor, GENERATION_ORDER, GENERATORS } from './sim-content.js';
import { type GenContext, iso } from './sim-doc-parts.js';
import { type LocaleCtx, parseSort, sortDocs } from './sim-query.js';
import { ISO_RE, JOINS, STATIC_JOINS } from './sim-schema.js';
import { makeKey, tenantNames } from './sim-tenants.js';

/**
 * A record: `main` is what published reads return (its `_status` is 'draft' only if it was never published);
 * `draft` is a newer unpublished version, read and written with `draft=true`.
 */
export interface StoredRecord {
  readonly id: string;
  main: JsonObject;
  draft: JsonObject | null;
}

export const viewOf = (rec: StoredRecord, draft: boolean): JsonObject => (draft ? (rec.draft ?? rec.main) : rec.main);

/** A record that was never published: invisible to published reads of a drafts-enabled collection (Payload). */
export const draftOnly = (rec: StoredRecord): boolean => rec.main._status === 'draft';

/** The version a read sees, or undefined when the record is invisible to it (never published, published read). */
export const visibleView = (c: CollectionSlug, rec: StoredRecord, draft: boolean): JsonObject | undefined =>
  draft ? (rec.draft ?? rec.main) : VERSIONED.has(c) && draftOnly(rec) ? undefined : rec.main;

/** A record's place in `(updatedAt, id)` order: `t` is the instant, Infinity when null or not a date (sorts last). */
export interface KeyEntry {
  readonly t: number;
  readonly id: string;
  readonly rec: StoredRecord;
}

// Parsed updatedAt values: generated data repeat them (about a third as many distinct values as records).
const instantCache = new Map<string, number>();
const keyInstant = (v: JsonValue | undefined): number => {
  if (typeof v !== 'string') return Number.POSITIVE_INFINITY;
  let t = instantCache.get(v);
  if (t === undefined) {
    t = ISO_RE.test(v) ? Date.parse(v) : Number.NaN;
    if (Number.isNaN(t)) t = Number.POSITIVE_INFINITY;
    if (instantCache.size >= 500_000) instantCache.clear();
    instantCache.set(v, t);
  }
  return t;
};

/** Orders two keys: instant, then id by code unit (as `sort=updatedAt,id` with nulls last, PostgreSQL's ASC). */
export const compareKeys = (a: { t: number; id: string }, b: { t: number; id: string }): number =>
  a.t !== b.t ? (a.t < b.t ? -1 : 1) : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/** First position in `entries` whose key is not below `k` (or, with `after`, is above it). */
export const lowerBound = (entries: readonly KeyEntry[], k: { t: number; id: string }, after = false): number => {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = compareKeys(entries[mid] as KeyEntry, k);
    if (c < 0 || (after && c === 0)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};

/**
 * The `(updatedAt, id)` order of one view (published or draft) of a collection, kept sorted as records change:
 * a keyset page is a binary search plus a slice, whatever the size of the collection.
 */
class KeysetIndex {
  entries: KeyEntry[] = [];
  built = false;
  /** Some record changed without `update`: re-check every record before the next use. */
  stale = false;
  readonly at = new Map<string, KeyEntry>();
  constructor(
    private readonly c: CollectionSlug,
    private readonly draft: boolean,
  ) {}

  private keyOf(rec: StoredRecord): KeyEntry | undefined {
    const v = visibleView(this.c, rec, this.draft);
    return v ? { t: keyInstant(v.updatedAt), id: rec.id, rec } : undefined;
  }

  build(records: Iterable<StoredRecord>): void {
    this.at.clear();
    const entries: KeyEntry[] = [];
    for (const rec of records) {
      const e = this.keyOf(rec);
      if (e) {
        entries.push(e);
        this.at.set(e.id, e);
      }
    }
    this.entries = entries.sort(compareKeys);
    this.built = true;
    this.stale = false;
  }

  /** The entries, built or re-checked first when needed. */
  current(byId: ReadonlyMap<string, StoredRecord>): readonly KeyEntry[] {
    if (!this.built) this.build(byId.values());
    else if (this.stale) {
      this.verify(byId);
      this.stale = false;
    }
    return this.entries;
  }

  drop(id: string): void {
    const e = this.at.get(id);
    if (!e) return;
    this.at.delete(id);
    const i = lowerBound(this.entries, e);
    if (this.entries[i] === e) this.entries.splice(i, 1);
    else this.entries = this.entries.filter((x) => x !== e);
  }

  /** Re-places one record (after it was created, changed or replaced). */
  update(rec: StoredRecord): void {
    const old = this.at.get(rec.id);
    const e = this.keyOf(rec);
    if (old && e && old.rec === rec && old.t === e.t) return;
    this.drop(rec.id);
    if (!e) return;
    this.entries.splice(lowerBound(this.entries, e), 0, e);
    this.at.set(e.id, e);
  }

  /** Brings the index up to date after changes it was not told about: O(n) comparisons, re-placing what moved. */
  verify(byId: ReadonlyMap<string, StoredRecord>): void {
    for (const [id, e] of this.at) if (byId.get(id) !== e.rec) this.drop(id);
    for (const rec of byId.values()) this.update(rec);
  }
}

/** One collection of one tenant, with lazily built sorted orders and reverse-relationship indexes. */
export class CollectionData {
  readonly byId = new Map<string, StoredRecord>();
  /** Top-level field names that may be queried and sorted on. */
  readonly fields = new Set<string>(['id']);
  /** Next generator index (keeps generated slugs and filenames unique). */
  nextIndex = 0;
  private readonly sorted = new Map<string, StoredRecord[]>();
  private readonly reverse = new Map<string, Map<string, string[]>>();
  private readonly filteredCache = new Map<string, StoredRecord[]>();
  private readonly keysets: Record<'p' | 'd', KeysetIndex>;

  constructor(readonly slug: CollectionSlug) {
    for (const j of JOINS[slug]) this.fields.add(j.field);
    for (const f of STATIC_JOINS[slug] ?? []) this.fields.add(f);
    this.keysets = { p: new KeysetIndex(slug, false), d: new KeysetIndex(slug, true) };
  }

  private dropCaches(): void {
    this.sorted.clear();
    this.reverse.clear();
    this.filteredCache.clear();
  }

  /** Call after changes to unnamed records: drops the cached orders; the keyset indexes are re-checked on next use. */
  changed(): void {
    this.dropCaches();
    for (const k of Object.values(this.keysets)) if (k.built) k.stale = true;
  }

  /** Call after one record was created or changed (its `main` or `draft` replaced): O(log n) index upkeep. */
  touched(rec: StoredRecord): void {
    this.dropCaches();
    for (const k of Object.values(this.keysets)) if (k.built && !k.stale) k.update(rec);
  }

  /** Records visible to a published (`draft` false) or draft read in `(updatedAt, id)` order, nulls last. */
  keyset(draft: boolean): readonly KeyEntry[] {
    return this.keysets[draft ? 'd' : 'p'].current(this.byId);
  }

  /**
   * `ordered` narrowed by a predicate, cached per (order, where) until the next change: a client paging through
   * one filtered list pays the filter once.
   */
  filtered(
    sort: string,
    draft: boolean,
    lc: LocaleCtx,
    whereKey: string,
    pred: (r: StoredRecord) => boolean,
  ): StoredRecord[] {
    const key = `${draft ? 'd' : 'p'}|${lc.locale}|${lc.fallback}|${sort}|${whereKey}`;
    let hit = this.filteredCache.get(key);
    if (!hit) {
      hit = this.ordered(sort, draft, lc).filter(pred);
      if (this.filteredCache.size >= 64) this.filteredCache.clear();
      this.filteredCache.set(key, hit);
    }
    return hit;
  }

  put(rec: StoredRecord, learnFields = true): void {
    this.byId.set(rec.id, rec);
    if (learnFields) for (const k of Object.keys(rec.main)) this.fields.add(k);
    this.touched(rec);
  }

  remove(id: string): StoredRecord | undefined {
    const rec = this.byId.get(id);
    if (rec) {
      this.byId.delete(id);
      this.dropCaches();
      for (const k of Object.values(this.keysets)) if (k.built) k.drop(id);
    }
    return rec;
  }

  /** All records in the order of `sort` (ties by id ascending), cached until the next change. */
  ordered(sort: string, draft: boolean, lc: LocaleCtx): StoredRecord[] {
    const key = `${draft ? 'd' : 'p'}|${lc.locale}|${lc.fallback}|${sort}`;
    let hit = this.sorted.get(key);
    if (!hit) {
      const keys = parseSort(sort, this.fields);
      const visible: StoredRecord[] = [];
      for (const r of this.byId.values()) if (visibleView(this.slug, r, draft)) visible.push(r);
      hit = sortDocs(visible, (r) => viewOf(r, draft), keys, lc);
      this.sorted.set(key, hit);
    }
    return hit;
  }

  /** Ids of records whose `field` holds `targetId`, newest created first, cached until the next change. */
  pointingAt(field: string, targetId: string): readonly string[] {
    let index = this.reverse.get(field);
    if (!index) {
      index = new Map();
      for (const rec of this.ordered('-createdAt', false, { locale: 'en', fallback: 'en' })) {
        const v = rec.main[field];
        for (const t of Array.isArray(v) ? v : [v]) {
          if (typeof t !== 'string') continue;
          const list = index.get(t);
          if (list) list.push(rec.id);
          else index.set(t, [rec.id]);
        }
      }
      this.reverse.set(field, index);
    }
    return index.get(targetId) ?? [];
  }

  /** A random existing id (for generated relationships). */
  randomId(prng: Prng): string | null {
    if (this.byId.size === 0) return null;
    const n = prng.int(0, this.byId.size - 1);
    let i = 0;
    for (const id of this.byId.keys()) if (i++ === n) return id;
    return null;
  }
}

/** What each collection's generator refers to: those are generated first. */
const DEPENDS_ON: Readonly<Record<CollectionSlug, readonly CollectionSlug[]>> = {
  media: [],
  venues: ['media'],
  organizations: ['media'],
  seasons: ['media'],
  series: ['media'],
  events: ['media', 'seasons', 'series', 'venues', 'organizations'],
  'event-instances': ['events', 'venues', 'series'],
  pages: ['media'],
  blogs: ['media'],
  posts: ['media', 'blogs'],
  forms: [],
  redirects: ['pages'],
  'custom-attributes': [],
};

/**
 * One tenant. Each collection is generated on first access, after the collections it refers to, from a PRNG and
 * id maker of its own: a large data set starts listening at once, each first request pays only for what it needs,
 * and the data do not depend on the order of access.
 */
export class TenantData {
  /** Ids of records created at run time. */
  readonly ids: IdMaker;
  private readonly data: Record<CollectionSlug, CollectionData>;
  private readonly pending: Map<CollectionSlug, Prng>;
  private readonly view: Record<CollectionSlug, CollectionData>;
  constructor(
    readonly slug: string,
    readonly name: string,
    readonly key: string,
    readonly prng: Prng,
    private readonly records: number,
    private readonly epochMs: number,
  ) {
    this.ids = new IdMaker(prng.fork(11));
    this.data = Object.fromEntries(COLLECTIONS.map((c) => [c, new CollectionData(c)])) as Record<
      CollectionSlug,
      CollectionData
    >;
    this.pending = new Map(COLLECTIONS.map((c, i) => [c, prng.fork(200 + i)]));
    this.view = new Proxy(this.data, {
      get: (target, key) => {
        if (typeof key === 'string' && this.pending.has(key as CollectionSlug)) this.generate(key as CollectionSlug);
        return target[key as CollectionSlug];
      },
    });
  }

  get collections(): Record<CollectionSlug, CollectionData> {
    return this.pending.size === 0 ? this.data : this.view;
  }

  private generate(c: CollectionSlug): void {
    const prng = this.pending.get(c);
    if (!prng) return;
    this.pending.delete(c);
    for (const d of DEPENDS_ON[c]) this.generate(d);
    generateCollection(this, c, countFor(c, this.records), this.epochMs, prng);
  }

  /** Generates every collection now rather than on first access. */
  prepare(): void {
    for (const c of GENERATION_ORDER) this.generate(c);
  }
}

const DAY = 86_400_000;

/**
 * The fixed epoch of a seed's data: mid-January 2026 (or the UTC midnight starting `dayMs`'s day) plus a
 * seed-derived number of minutes.
 */
export const epochFor = (seed: number, dayMs = Date.UTC(2026, 0, 15)): number =>
  Math.floor(dayMs / DAY) * DAY + (Math.abs(seed) % 10_000) * 60_000;

/** Deep copy of JSON data. */
export const clone = <T extends JsonValue>(v: T): T => structuredClone(v);

/** How far ahead of the clock a previous stamp may be and still hold the next one back (see `nextStamp`). */
const FORCED_AHEAD_MS = 60_000;

/**
 * `updatedAt` for a change: strictly after every previous value given, and not before now. A previous value more
 * than a minute ahead of the clock was forced (`mutate` with `updatedAt`, e.g. 2099) and is ignored: a forced
 * value never moves the clock, so later ordinary edits are dated now.
 */
export const nextStamp = (now: number, previous: readonly (JsonValue | undefined)[]): string => {
  let t = now;
  for (const p of previous) {
    if (typeof p !== 'string') continue;
    const ms = Date.parse(p);
    if (!Number.isNaN(ms) && ms + 1 > t && ms <= now + FORCED_AHEAD_MS) t = ms + 1;
  }
  return iso(t);
};

export interface GenerateOptions {
  readonly seed: number;
  readonly tenants: number;
  readonly records: number;
  readonly keys: Readonly<Record<string, string>>;
  /** The day generated dates are placed around (default 2026-01-15); any instant of it gives the same data. */
  readonly dayMs?: number;
}

/** The whole data set, deterministic from the seed. */
export function generateTenants(opts: GenerateOptions): TenantData[] {
  const root = new Prng(opts.seed);
  const names = tenantNames(root.fork(1), opts.tenants);
  const epochMs = epochFor(opts.seed, opts.dayMs);
  return names.map((n, t) => {
    const prng = root.fork(100 + t);
    const generated = makeKey(prng.fork(7));
    const key = opts.keys[n.slug] ?? generated;
    return new TenantData(n.slug, n.name, key, prng, opts.records, epochMs);
  });
}

function generateCollection(t: TenantData, c: CollectionSlug, count: number, epochMs: number, prng: Prng): void {
  const ids = new IdMaker(prng.fork(1));
  // A pool of about count/3 distinct updatedAt values (so ties exist at every page size) plus three "bulk import"
  // instants shared by many records.
  const yearMs = 365 * DAY;
  const pool: number[] = [];
  for (let i = 0; i < Math.max(1, Math.ceil(count / 3)); i++) pool.push(epochMs - prng.int(0, yearMs));
  const clusters = [epochMs - prng.int(0, yearMs), epochMs - prng.int(0, yearMs), epochMs - prng.int(0, 30 * DAY)];
  const refLists = new Map<CollectionSlug, string[]>();
  const ref = (target: CollectionSlug): string | null => {
    let list = refLists.get(target);
    if (!list) {
      list = [...t.collections[target].byId.keys()];
      refLists.set(target, list);
    }
    return list.length ? (list[prng.int(0, list.length - 1)] as string) : null;
  };
  const ctx: GenContext = {
    prng,
    ids,
    tenant: t.slug,
    tenantName: t.name,
    site: `https://www.${t.slug}.example.org`,
    epochMs,
    stamps: () => {
      const updatedAt = prng.chance(0.15)
        ? (clusters[prng.int(0, 2)] as number)
        : (pool[prng.int(0, pool.length - 1)] as number);
      return { createdAt: updatedAt - prng.int(0, 90) * DAY - prng.int(0, 86_399_999), updatedAt };
    },
    ref,
  };
  const data = t.collections[c];
  const versioned = VERSIONED.has(c);
  let drafts = 0;
  for (let i = 0; i < count; i++) {
    const main = GENERATORS[c](ctx, data.nextIndex++);
    // Every drafts-enabled collection has never-published records at every seed: the last one, if chance gave none.
    if (versioned && i === count - 1 && drafts === 0) main._status = 'draft';
    if (main._status === 'draft') drafts++;
    let draft: JsonObject | null = null;
    if (versioned && main._status === 'published' && prng.chance(0.2)) draft = makeDraft(main, prng);
    // Generated records of a collection share one set of fields: learn them from the first.
    data.put({ id: String(main.id), main, draft }, i === 0);
  }
}

/** A newer draft of a published record: title and description differ, `_status` draft, later updatedAt. */
export function makeDraft(main: JsonObject, prng: Prng): JsonObject {
  // Shallow: stored documents are never changed in place, so the draft may share the unchanged sub-objects.
  const d: JsonObject = { ...main };
  const n = prng.int(2, 9);
  for (const f of ['title', 'name', 'description']) {
    const v = d[f];
    if (isJsonObject(v) && typeof v.en === 'string') d[f] = { ...v, en: `${v.en} (draft ${n})` };
  }
  d._status = 'draft';
  d.updatedAt = iso(Date.parse(String(main.updatedAt)) + prng.int(1, 10 * 24 * 60) * 60_000);
  return d;
}

/** A generator context for records created at run time (mutator creates): stamps are "now". */
export function runtimeContext(t: TenantData, prng: Prng, now: number): GenContext {
  return {
    prng,
    ids: t.ids,
    tenant: t.slug,
    tenantName: t.name,
    site: `https://www.${t.slug}.example.org`,
    epochMs: now,
    stamps: () => ({ createdAt: now, updatedAt: now }),
    ref: (target) => t.collections[target].randomId(prng),
  };
}
