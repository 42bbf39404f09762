import {
  type CollectionSlug,
  FORBIDDEN_FIELDS,
  FORBIDDEN_ON,
  type RouteOp,
  VERSIONED,
} from '../vocabulary/collections.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../vocabulary/ids.js';
import type { SimParams } from './parse-params.js';
import { type CollectionData, clone, nextStamp, type StoredRecord, type TenantData } from './sim-db.js';
import { iso } from './sim-doc-parts.js';
import { isLocaleObject, SimHttpError, validationError } from './sim-query.js';
import { notFound } from './sim-read.js';
import { ISO_RE, LOCALES, LOCALIZED, RELATIONSHIPS, REQUIRED_ON_CREATE, SERVER_OWNED, UNIQUE } from './sim-schema.js';

type Kind = 'localized' | 'rel' | 'relMany' | 'date' | 'string' | 'number' | 'boolean' | 'object' | 'array' | 'any';

const kindsCache = new WeakMap<CollectionData, Map<string, Kind>>();

/** The kind of each field of a collection, learnt from its stored records (relationships from the schema). */
function fieldKinds(data: CollectionData): Map<string, Kind> {
  const hit = kindsCache.get(data);
  if (hit) return hit;
  const kinds = new Map<string, Kind>();
  for (const r of RELATIONSHIPS[data.slug]) kinds.set(r.field, r.hasMany ? 'relMany' : 'rel');
  let seen = 0;
  for (const rec of data.byId.values()) {
    for (const [k, v] of Object.entries(rec.main)) {
      if (kinds.has(k) && kinds.get(k) !== 'any') continue;
      kinds.set(k, kindOf(k, v));
    }
    if (++seen > 50) break;
  }
  kindsCache.set(data, kinds);
  return kinds;
}

const kindOf = (k: string, v: JsonValue): Kind => {
  if (v === null) return 'any';
  if (LOCALIZED.has(k) && isLocaleObject(v)) return 'localized';
  if (typeof v === 'string') return ISO_RE.test(v) ? 'date' : 'string';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'boolean') return 'boolean';
  if (Array.isArray(v)) return 'array';
  return 'object';
};

interface Issue {
  path: string;
  message: string;
}

/** Fields this route may not set (spec rule 1): blocks, theme and theme settings go through their own endpoints. */
function forbiddenIssues(c: CollectionSlug, b: JsonObject, op: RouteOp): Issue[] {
  const forbiddenOp = op === 'create' ? 'create' : op === 'put' || op === 'patch' ? 'put' : op;
  if (!(FORBIDDEN_ON[c] ?? []).includes(forbiddenOp)) return [];
  const issues: Issue[] = [];
  for (const f of FORBIDDEN_FIELDS) {
    if (f in b) issues.push({ path: f, message: `${f} cannot be set by this route; use the {id}/blocks endpoint` });
  }
  const theme = b.theme;
  if (isJsonObject(theme) && 'themeSettings' in theme && !issues.some((i) => i.path === 'theme'))
    issues.push({ path: 'theme.themeSettings', message: 'themeSettings cannot be set by this route' });
  return issues;
}

/** One write: where it goes, its query, the record it changes (null for a create) and the issues found so far. */
interface WriteCheck {
  readonly t: TenantData;
  readonly c: CollectionSlug;
  readonly op: RouteOp;
  readonly params: SimParams;
  readonly existing: StoredRecord | null;
  readonly issues: Issue[];
}

/** `_status` is written on versioned collections only, and is "draft" or "published". */
function acceptStatus(w: WriteCheck, v: JsonValue, accepted: JsonObject): void {
  if (!VERSIONED.has(w.c)) return;
  if (v !== 'draft' && v !== 'published') w.issues.push({ path: '_status', message: 'must be "draft" or "published"' });
  else accepted._status = v;
}

/** The body's fields of the collection, each of the kind stored there (empty strings as Payload casts them). */
function acceptFields(w: WriteCheck, b: JsonObject): JsonObject {
  const data = w.t.collections[w.c];
  const kinds = fieldKinds(data);
  const accepted: JsonObject = {};
  for (const [k, v] of Object.entries(b)) {
    if (SERVER_OWNED.has(k) || w.issues.some((i) => i.path === k)) continue;
    if (k === '_status') {
      acceptStatus(w, v, accepted);
      continue;
    }
    const kind = kinds.get(k);
    if (kind === undefined) continue;
    const value = kind === 'object' ? emptiedIn(v, w.existing?.main[k] ?? sampleOf(data, k)) : emptied(kind, v);
    const bad = checkKind({ t: w.t, c: w.c, k, params: w.params }, kind, value);
    if (bad) w.issues.push({ path: k, message: bad });
    else accepted[k] = value;
  }
  return accepted;
}

/** Rules over the accepted fields as a whole: media keep their filename, creates name required fields, unique stays unique. */
function recordIssues(w: WriteCheck, accepted: JsonObject): void {
  const { c, existing, issues } = w;
  if (c === 'media' && existing && 'filename' in accepted && accepted.filename !== existing.id)
    issues.push({ path: 'filename', message: 'filename cannot be changed (it addresses the media record)' });
  if (w.op === 'create') {
    for (const f of REQUIRED_ON_CREATE[c] ?? []) {
      const v = accepted[f];
      if (v === undefined || v === null || v === '') issues.push({ path: f, message: 'This field is required.' });
    }
  }
  const uniq = UNIQUE[c];
  if (!uniq || typeof accepted[uniq] !== 'string') return;
  for (const rec of w.t.collections[c].byId.values()) {
    if (rec.id === existing?.id) continue;
    if (rec.main[uniq] === accepted[uniq] || rec.draft?.[uniq] === accepted[uniq]) {
      issues.push({ path: uniq, message: 'Value must be unique' });
      return;
    }
  }
}

/** Checks a write body; returns the accepted fields (unknown and server-owned fields are dropped, as Payload does). */
function validateBody(
  t: TenantData,
  c: CollectionSlug,
  body: unknown,
  op: RouteOp,
  params: SimParams,
  existing: StoredRecord | null,
): JsonObject {
  if (!isJsonObject(body as JsonValue)) throw new SimHttpError(400, 'The request body must be a JSON object');
  const b = body as JsonObject;
  const w: WriteCheck = { t, c, op, params, existing, issues: forbiddenIssues(c, b, op) };
  const accepted = acceptFields(w, b);
  recordIssues(w, accepted);
  if (w.issues.length) throw validationError(c, w.issues);
  return accepted;
}

/**
 * An empty string as Payload stores it (`beforeValidate` sanitizes, then the MongoDB adapter casts): a number, a
 * date or a relationship becomes null, a checkbox false, a has-many relationship `[]`; text keeps `""`.
 */
const emptied = (kind: Kind, v: JsonValue): JsonValue => {
  if (v !== '') return v;
  if (kind === 'number' || kind === 'date' || kind === 'rel') return null;
  if (kind === 'boolean') return false;
  return kind === 'relMany' ? [] : v;
};

/** Empty strings inside a group (`booking: {bookingLinkLabel: ""}`), each by the kind of the value it replaces. */
const emptiedIn = (v: JsonValue, like: JsonValue | undefined): JsonValue => {
  if (!isJsonObject(v)) return v;
  const out: JsonObject = {};
  for (const [k, x] of Object.entries(v)) {
    const was = isJsonObject(like) ? like[k] : undefined;
    out[k] = isJsonObject(x) ? emptiedIn(x, was) : was === undefined || was === null ? x : emptied(kindOf(k, was), x);
  }
  return out;
};

/** A stored value of field `k` to learn a group's shape from, when the record written has none. */
const sampleOf = (data: CollectionData, k: string): JsonValue | undefined => {
  for (const rec of data.byId.values()) if (isJsonObject(rec.main[k])) return rec.main[k];
  return undefined;
};

/** Where a value is written: the tenant, collection and field, and the request's query (its locale). */
interface FieldAt {
  readonly t: TenantData;
  readonly c: CollectionSlug;
  readonly k: string;
  readonly params: SimParams;
}

const checkLocalized = (v: JsonValue, at: FieldAt): string | null => {
  if (v === null || typeof v === 'string') return null;
  if (at.params.locale !== 'all' || !isJsonObject(v)) return 'must be a string';
  const ok = Object.entries(v).every(
    ([l, x]) => (LOCALES as readonly string[]).includes(l) && (typeof x === 'string' || x === null),
  );
  return ok ? null : 'must map locales (en, fr) to strings';
};

const relOf = (at: FieldAt) => RELATIONSHIPS[at.c].find((r) => r.field === at.k);

const checkRel = (v: JsonValue, at: FieldAt): string | null => {
  if (v === null) return null;
  const rel = relOf(at);
  if (typeof v !== 'string') return 'must be a record id';
  return rel && !at.t.collections[rel.to].byId.has(v) ? `no ${rel.to} record with id ${v}` : null;
};

const checkRelMany = (v: JsonValue, at: FieldAt): string | null => {
  const rel = relOf(at);
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) return 'must be an array of record ids';
  const missing = rel ? v.find((x) => !at.t.collections[rel.to].byId.has(x as string)) : undefined;
  return missing ? `no ${rel?.to} record with id ${missing}` : null;
};

/** A check that accepts null or values passing `ok`, and otherwise says what the value must be. */
const nullOr =
  (ok: (v: JsonValue) => boolean, message: string) =>
  (v: JsonValue): string | null =>
    v === null || ok(v) ? null : message;

/** The value check of each field kind: null when the value fits, else the message. */
const KIND_CHECKS: Record<Kind, (v: JsonValue, at: FieldAt) => string | null> = {
  localized: checkLocalized,
  rel: checkRel,
  relMany: checkRelMany,
  date: nullOr((v) => typeof v === 'string' && ISO_RE.test(v), 'must be an ISO 8601 date-time'),
  string: nullOr((v) => typeof v === 'string', 'must be a string'),
  number: nullOr((v) => typeof v === 'number', 'must be a number'),
  boolean: nullOr((v) => typeof v === 'boolean', 'must be a boolean'),
  array: (v) => (Array.isArray(v) ? null : 'must be an array'),
  object: nullOr(isJsonObject, 'must be an object'),
  any: () => null,
};

const checkKind = (at: FieldAt, kind: Kind, v: JsonValue): string | null => KIND_CHECKS[kind](v, at);

/** Payload-style merge: group objects merge field by field, arrays and scalars replace; localized fields per locale. */
function merge(target: JsonObject, patch: JsonObject, locale: string): JsonObject {
  const out = clone(target);
  for (const [k, v] of Object.entries(patch)) {
    const cur = out[k];
    if (LOCALIZED.has(k) && (isLocaleObject(cur) || cur === undefined || cur === null)) {
      const base: JsonObject = isJsonObject(cur) ? cur : {};
      if (locale === 'all' && isJsonObject(v)) out[k] = { ...base, ...v };
      else out[k] = { ...base, [locale === 'all' ? 'en' : locale]: v };
      continue;
    }
    out[k] = isJsonObject(v) && isJsonObject(cur) && !isLocaleObject(cur) ? deepMerge(cur, v) : clone(v);
  }
  return out;
}

const deepMerge = (a: JsonObject, b: JsonObject): JsonObject => {
  const out: JsonObject = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const cur = out[k];
    out[k] = isJsonObject(v) && isJsonObject(cur) ? deepMerge(cur, v) : clone(v);
  }
  return out;
};

/** An empty record of a collection: every field present with an empty value, as Payload returns defaults. */
function blankRecord(data: CollectionData): JsonObject {
  const sample = data.byId.values().next().value?.main;
  const blank = (v: JsonValue, k: string): JsonValue => {
    if (Array.isArray(v)) return [];
    if (typeof v === 'boolean') return false;
    if (LOCALIZED.has(k) && isLocaleObject(v)) return null;
    if (isJsonObject(v)) {
      const o: JsonObject = {};
      for (const [kk, vv] of Object.entries(v)) o[kk] = blank(vv, kk);
      return o;
    }
    return null;
  };
  const out: JsonObject = {};
  if (sample) for (const [k, v] of Object.entries(sample)) out[k] = blank(v, k);
  if ('theme' in out) out.theme = { themeSettings: [] };
  return out;
}

export interface WriteResult {
  readonly stored: JsonObject;
  /** Read the result back as a draft (the write addressed the draft). */
  readonly draft: boolean;
}

export interface WriteDeps {
  readonly now: () => number;
  /**
   * Updates as Payload 3 applies them (`updatesOntoLatest`): an update without `draft=true` is merged onto the
   * latest version, a pending draft included, and keeps that version's `_status` unless the body sets one.
   */
  readonly updatesOntoLatest?: boolean;
}

/** POST: creates a record (a draft-only record with `draft=true` on versioned collections). */
export function createDoc(
  deps: WriteDeps,
  t: TenantData,
  c: CollectionSlug,
  body: unknown,
  params: SimParams,
): WriteResult {
  const accepted = validateBody(t, c, body, 'create', params, null);
  const data = t.collections[c];
  const now = deps.now();
  const stamp = iso(now);
  let doc = merge(blankRecord(data), accepted, params.locale);
  if (c === 'media') {
    const filename = String(accepted.filename);
    doc = {
      ...doc,
      id: filename,
      prefix: 'media',
      src: `/media/${t.slug}/${filename}`,
      url: `/media/${t.slug}/${filename}`,
    };
  } else {
    const { id: _blank, ...rest } = doc;
    doc = { id: t.ids.make(now), ...rest, tenant: t.slug };
  }
  doc.createdAt = stamp;
  doc.updatedAt = stamp;
  const versioned = VERSIONED.has(c);
  // Payload's `_status` defaults to draft: a create publishes only when the body says so (and not with `draft=true`).
  if (versioned) doc._status = params.draft ? 'draft' : (accepted._status ?? 'draft');
  if (typeof doc.slug !== 'string' && 'slug' in doc) {
    const title = doc.title;
    const en = isJsonObject(title) ? title.en : title;
    if (typeof en === 'string') doc.slug = uniqueSlug(data, en);
  }
  const rec: StoredRecord = { id: String(doc.id), main: doc, draft: null };
  data.put(rec);
  return { stored: doc, draft: params.draft && versioned };
}

const uniqueSlug = (data: CollectionData, title: string): string => {
  const base =
    title
      .toLowerCase()
      .normalize('NFD')
      .replace(/[\u0300-\u036f]/g, '')
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'untitled';
  const taken = new Set<JsonValue | undefined>([...data.byId.values()].map((r) => r.main.slug));
  let slug = base;
  for (let i = 2; taken.has(slug); i++) slug = `${base}-${i}`;
  return slug;
};

/** PUT or PATCH: a partial update of the published record, or of the draft with `draft=true`. */
export function updateDoc(
  deps: WriteDeps,
  t: TenantData,
  c: CollectionSlug,
  id: string,
  body: unknown,
  params: SimParams,
  op: 'put' | 'patch',
): WriteResult {
  const data = t.collections[c];
  const rec = data.byId.get(id);
  if (!rec) throw notFound();
  const accepted = validateBody(t, c, body, op, params, rec);
  const now = deps.now();
  if (VERSIONED.has(c) && params.draft) {
    const base = rec.draft ?? rec.main;
    const next = merge(base, accepted, params.locale);
    next._status = 'draft';
    next.updatedAt = nextStamp(now, [rec.main.updatedAt, rec.draft?.updatedAt]);
    rec.draft = next;
    data.touched(rec);
    return { stored: next, draft: true };
  }
  const ontoLatest = VERSIONED.has(c) && deps.updatesOntoLatest === true;
  const base = ontoLatest ? (rec.draft ?? rec.main) : rec.main;
  const next = merge(base, accepted, params.locale);
  next.updatedAt = nextStamp(now, [rec.main.updatedAt, rec.draft?.updatedAt]);
  if (VERSIONED.has(c)) {
    // Payload (updateByID: getLatestCollectionVersion, then beforeChange over it) keeps the latest version's status.
    next._status = accepted._status ?? (ontoLatest ? (base._status ?? 'published') : 'published');
    // Publishing makes this version the latest: an older unpublished draft is superseded (Payload's versions).
    rec.draft = null;
  }
  rec.main = next;
  data.touched(rec);
  return { stored: next, draft: false };
}

/** DELETE: removes the record and returns it as it was. */
export function deleteDoc(t: TenantData, c: CollectionSlug, id: string): StoredRecord {
  const rec = t.collections[c].byId.get(id);
  if (!rec) throw notFound();
  t.collections[c].remove(id);
  return rec;
}
