import { COLLECTIONS, type CollectionSlug, VERSIONED } from '../../src/vocabulary/collections.js';
import { WHERE_OPERATORS } from '../../src/vocabulary/where-operators.js';

/** A generated read: a path under `/partners/2026-02/{tenant}/` and what it exercises. */
export interface GenRead {
  readonly tenant: string;
  readonly collection: string;
  readonly id: string | null;
  readonly query: string;
  readonly tags: readonly string[];
}

type Doc = Record<string, unknown>;
/** Every record of each tenant's collections, published and draft, as the simulator lists them at depth 0. */
export type SimRecords = Record<string, Record<string, { pub: Doc[]; drf: Doc[] }>>;

const OPS = WHERE_OPERATORS;
const JOINED = new Set(['posts', 'categories', 'tags', 'events', 'event-instances']);
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)$/;

/** A seeded PRNG (mulberry32): the same requests on every run. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T;
  return { next, pick, chance: (p: number) => next() < p };
}

interface Leaf {
  readonly path: string;
  readonly vals: unknown[];
  readonly inArr: boolean;
  readonly types: Set<string>;
}

/** The leaf paths of a collection's records with their values (objects and arrays walked through). */
function leaves(docs: readonly Doc[], c: string): Leaf[] {
  const inv = new Map<string, Leaf>();
  const walk = (v: unknown, path: string, inArr: boolean) => {
    if (Array.isArray(v)) for (const x of v) walk(x, path, true);
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, `${path}.${k}`, inArr);
    else {
      const e = inv.get(path) ?? { path, vals: [], inArr, types: new Set<string>() };
      inv.set(path, e);
      if (v !== null) {
        e.vals.push(v);
        e.types.add(typeof v === 'string' && ISO.test(v) ? 'date' : typeof v);
      }
    }
  };
  for (const d of docs)
    for (const [k, v] of Object.entries(d)) {
      if (JOINED.has(k) || k.startsWith('rich') || (c === 'media' && (k === 'url' || k === 'src'))) continue;
      walk(v, k, false);
    }
  return [...inv.values()].filter((e) => e.path !== 'tenant');
}

const encode = (q: Record<string, unknown>): string => {
  const parts: string[] = [];
  const walk = (v: unknown, key: string) => {
    if (Array.isArray(v)) for (const [i, x] of v.entries()) walk(x, `${key}[${i}]`);
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, key ? `${key}[${k}]` : k);
    else parts.push(`${key}=${encodeURIComponent(String(v))}`);
  };
  walk(q, '');
  return parts.join('&');
};

const shift = (iso: string, hours: number): string => {
  const s = new Date(Date.parse(iso) + hours * 3_600_000).toISOString().slice(0, 23);
  return `${s}${hours >= 0 ? '+' : '-'}${String(Math.abs(hours)).padStart(2, '0')}:00`;
};

/** One condition with operator `op` on some path of the records, or null when none fits. */
function condition(r: ReturnType<typeof prng>, inv: readonly Leaf[], op: (typeof OPS)[number]) {
  const scalar = (e: Leaf) => e.types.size === 1 && e.vals.length > 0;
  const fits = inv.filter((e) =>
    op === 'exists'
      ? true
      : op === 'like' || op === 'contains'
        ? scalar(e) && e.types.has('string') && e.vals.some((v) => String(v).length >= 3)
        : op.startsWith('greater') || op.startsWith('less')
          ? scalar(e) && !e.types.has('boolean')
          : e.vals.length > 0,
  );
  if (fits.length === 0) return null;
  const e = r.pick(fits);
  const v = e.vals.length ? r.pick(e.vals) : null;
  const tags = [`op:${op}`, ...(e.path.includes('.') ? ['nested path'] : []), ...(e.inArr ? ['array path'] : [])];
  let operand: unknown = v;
  if (op === 'in' || op === 'not_in') operand = [...new Set([v, r.pick(e.vals), r.pick(e.vals)].map(String))];
  else if (op === 'like') operand = String(v).split(/\s+/).slice(0, 2).join(' ').toUpperCase();
  else if (op === 'contains') operand = String(v).slice(1, 5).toLowerCase();
  else if (op === 'exists') operand = r.chance(0.5) ? 'true' : 'false';
  else if (typeof v === 'string' && ISO.test(v) && r.chance(0.4)) {
    operand = r.chance(0.5) ? shift(v, r.pick([2, -5])) : v.slice(0, 10);
    tags.push('date operand rewritten');
  }
  const segs = e.path.split('.');
  const nested = segs.length > 1 && r.chance(0.35);
  let cond: Record<string, unknown> = { [op]: operand };
  if (nested) for (const s of [...segs].reverse()) cond = { [s]: cond };
  else cond = { [e.path]: cond };
  return { cond, tags };
}

/** Reads of every kind the upstream answers, drawn from the records the simulator holds (at least 300). */
export function generateReads(data: SimRecords, seed: number): GenRead[] {
  const r = prng(seed);
  const out: GenRead[] = [];
  const tenants = Object.keys(data);
  const add = (tenant: string, collection: string, id: string | null, q: Record<string, unknown>, tags: string[]) =>
    out.push({ tenant, collection, id, query: encode(q), tags });
  const common = (c: CollectionSlug, total: number) => {
    const q: Record<string, unknown> = {};
    const tags: string[] = [];
    if (r.chance(VERSIONED.has(c) ? 0.3 : 0.05)) {
      q.draft = 'true';
      tags.push('draft');
    }
    const loc = r.pick(['', '', '', 'fr', 'fr', 'all', 'fr-none', 'de']);
    if (loc === 'fr-none') Object.assign(q, { locale: 'fr', fallbackLocale: 'none' });
    else if (loc) q.locale = loc;
    if (loc) tags.push(`locale:${loc}`);
    const depth = r.pick(['', '0', '0', '1', '2']);
    if (depth) q.depth = depth;
    tags.push(`depth:${depth || 'default'}`);
    const limit = r.pick(['', '1', '3', '5', '10', '25']);
    if (limit) q.limit = limit;
    const page = r.pick(['', '', '2', 'past']);
    if (page === 'past') {
      q.page = String(Math.ceil(total / Number(limit || 10)) + 2);
      tags.push('page past the end');
    } else if (page) q.page = page;
    return { q, tags };
  };
  const sortOf = (inv: readonly Leaf[], n: number) => {
    const keys = inv.filter((e) => !e.inArr && e.types.size === 1 && !e.types.has('object'));
    const chosen = Array.from({ length: n }, () => r.pick(keys)).filter(Boolean);
    return [...new Set(chosen.map((e) => `${r.chance(0.45) ? '-' : ''}${e.path}`))].join(',');
  };
  const pairs = tenants.flatMap((t) => COLLECTIONS.filter((c) => data[t]?.[c]).map((c) => [t, c] as const));
  for (let i = 0; i < OPS.length * 16; i++) {
    const op = OPS[i % OPS.length] as (typeof OPS)[number];
    const [t, c] = r.pick(pairs);
    const recs = data[t]?.[c] as { pub: Doc[]; drf: Doc[] };
    const inv = leaves(recs.pub, c);
    const first = condition(r, inv, op);
    if (!first) continue;
    const { q, tags } = common(c, recs.pub.length);
    const second = r.chance(0.5) ? condition(r, inv, r.pick(OPS)) : null;
    q.where = second ? { [r.pick(['and', 'or'])]: [first.cond, second.cond] } : first.cond;
    if (r.chance(0.7)) q.sort = sortOf(inv, 1 + Math.floor(r.next() * 3));
    add(t, c, null, q, [...tags, ...first.tags, ...(second?.tags ?? []), `collection:${c}`]);
  }
  for (const [t, c] of pairs) {
    const recs = data[t]?.[c] as { pub: Doc[]; drf: Doc[] };
    const inv = leaves(recs.pub, c);
    for (let k = 0; k < 3; k++) {
      const { q, tags } = common(c, recs.pub.length);
      q.sort = sortOf(inv, 1 + k);
      add(t, c, null, q, [...tags, 'sort', `collection:${c}`]);
    }
    add(t, c, null, { pagination: 'false', limit: '5', page: '2', depth: '0' }, ['pagination=false']);
    const key = (d: Doc) => String(c === 'media' ? d.filename : d.id);
    for (const d of [r.pick(recs.pub), r.pick(recs.pub)].filter(Boolean)) {
      const { q, tags } = common(c, 1);
      delete q.limit;
      delete q.page;
      add(t, c, key(d), q, [...tags, 'by id']);
    }
    const pubIds = new Set(recs.pub.map((d) => d.id));
    const never = recs.drf.find((d) => !pubIds.has(d.id));
    if (never) {
      add(t, c, key(never), { depth: '0' }, ['by id', 'never published']);
      add(t, c, key(never), { depth: '1', draft: 'true' }, ['by id', 'never published', 'draft']);
    }
    add(t, c, 'no-such-record', {}, ['by id', 'missing']);
  }
  for (const t of tenants) relationshipReads(data, t, r, add);
  const t0 = tenants[0] as string;
  for (const q of [
    'where[title]=x',
    'where[title][nope]=x',
    'where[nosuchfield][equals]=1',
    'sort=nosuchfield',
    'sort=-title,nosuchfield',
    'limit=-1',
    'page=0',
    'depth=x',
    'limit=abc',
    'where[or][0][nosuchfield][like]=x',
    'where[image.nosuchfield][equals]=x',
    'where=abc',
  ])
    out.push({ tenant: t0, collection: 'series', id: null, query: q, tags: ['bad parameter'] });
  return out;
}

/** Relationship fields a `where` reaches through (`event.title`), with a text field of the related record. */
const THROUGH: readonly [from: CollectionSlug, field: string, to: CollectionSlug, sub: string][] = [
  ['event-instances', 'event', 'events', 'title'],
  ['events', 'venue', 'venues', 'title'],
  ['events', 'series', 'series', 'title'],
  ['posts', 'blog', 'blogs', 'title'],
];

/** Reads whose `where` goes through a relationship to the related record, one and two levels deep. */
function relationshipReads(
  data: SimRecords,
  t: string,
  r: ReturnType<typeof prng>,
  add: (tenant: string, c: string, id: null, q: Record<string, unknown>, tags: string[]) => void,
): void {
  const ids = (v: unknown): unknown[] => (Array.isArray(v) ? v : [v]);
  const related = (c: CollectionSlug, field: string, to: CollectionSlug) => {
    const byId = new Map((data[t]?.[to]?.pub ?? []).map((d) => [d.id, d]));
    const from = (data[t]?.[c]?.pub ?? []).filter((d) => ids(d[field]).some((id) => byId.has(id)));
    const d = from.length ? r.pick(from) : undefined;
    return d
      ? (ids(d[field])
          .map((id) => byId.get(id))
          .find(Boolean) as Doc)
      : undefined;
  };
  for (const [c, field, to, sub] of THROUGH) {
    const value = related(c, field, to)?.[sub];
    if (typeof value !== 'string' || !value) continue;
    const word = value.split(/\s+/)[0] as string;
    const tags = ['through a relationship', `collection:${c}`];
    add(t, c, null, { where: { [`${field}.${sub}`]: { equals: value } }, depth: '0', sort: 'id' }, tags);
    add(t, c, null, { where: { [field]: { [sub]: { like: word } } }, depth: '1', limit: '5' }, [
      ...tags,
      'nested path',
    ]);
    add(
      t,
      c,
      null,
      { where: { [`${field}.${sub}`]: { not_equals: value } }, depth: '0', sort: '-id', limit: '5' },
      tags,
    );
    add(
      t,
      c,
      null,
      { where: { or: [{ [`${field}.${sub}`]: { in: [value, 'nothing'] } }, { id: { equals: 'x' } }] }, depth: '0' },
      tags,
    );
    add(t, c, null, { where: { [`${field}.id`]: { exists: 'true' } }, depth: '0', limit: '3' }, tags);
    add(t, c, null, { where: { [`${field}.${sub}`]: { like: word } }, draft: 'true', depth: '0' }, [...tags, 'draft']);
  }
  const venue = related('events', 'venue', 'venues')?.title;
  if (typeof venue === 'string' && venue) {
    const q = { where: { 'event.venue.title': { like: venue.split(/\s+/)[0] } }, depth: '0', sort: 'id', limit: '10' };
    add(t, 'event-instances', null, q, ['through a relationship', 'two relationships deep']);
  }
}
