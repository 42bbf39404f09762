import type { BulkKind, CollectionSlug } from '../vocabulary/collections.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../vocabulary/ids.js';
import type { SimParams } from './parse-params.js';
import { ATTRIBUTE_CONFIG } from './sim-content.js';
import { type CollectionData, clone, nextStamp, type StoredRecord, type TenantData } from './sim-db.js';
import { compileWhere, SimHttpError, validationError } from './sim-query.js';
import { themeSettingsSchema } from './sim-theme-schema.js';

/** The bulk request body (the Payload way: a target selector plus the changes). */
interface BulkBody {
  readonly target: { kind: 'ids'; ids: string[] } | { kind: 'where'; where: JsonObject } | { kind: 'all' };
  readonly set: JsonObject;
  readonly unset: string[];
  readonly dryRun: boolean;
}

interface Allowed {
  readonly type: string;
  /** For selects: the allowed values (null allowed when listed). */
  readonly options: readonly JsonValue[] | null;
}

/** Keys that may be written, and their value rules, for one bulk route. */
function allowedKeys(t: TenantData, c: CollectionSlug, kind: BulkKind): Map<string, Allowed> {
  const out = new Map<string, Allowed>();
  if (kind === 'custom-attributes') {
    const cfgName = ATTRIBUTE_CONFIG[c];
    const cfg = t.collections['custom-attributes'].byId.values().next().value?.main;
    const list = cfgName && cfg ? cfg[cfgName] : undefined;
    if (Array.isArray(list)) {
      for (const e of list) {
        if (!isJsonObject(e) || typeof e.key !== 'string') continue;
        const options =
          Array.isArray(e.options) && e.options.length
            ? e.options.map((o) => (isJsonObject(o) ? (o.value ?? null) : o))
            : null;
        out.set(e.key, { type: String(e.type ?? 'text'), options });
      }
    }
  } else {
    const schema = themeSettingsSchema(c);
    for (const f of Array.isArray(schema.fields) ? schema.fields : []) {
      if (!isJsonObject(f) || typeof f.key !== 'string') continue;
      const options =
        Array.isArray(f.options) && f.options.length
          ? f.options.map((o) => (isJsonObject(o) ? (o.value ?? null) : o))
          : null;
      out.set(f.key, { type: String(f.type), options });
    }
  }
  return out;
}

const valueProblem = (a: Allowed, v: JsonValue): string | null => {
  if (a.options)
    return a.options.some((o) => o === v)
      ? null
      : `must be one of ${a.options.map((o) => JSON.stringify(o)).join(', ')}`;
  switch (a.type) {
    case 'boolean':
    case 'checkbox':
      return typeof v === 'boolean' ? null : 'must be a boolean';
    case 'number':
      return typeof v === 'number' && Number.isFinite(v) ? null : 'must be a number';
    default:
      return typeof v === 'string' ? null : 'must be a string';
  }
};

type Issues = { path: string; message: string }[];

const KNOWN_FIELDS = new Set(['where', 'ids', 'all', 'set', 'unset', 'dryRun']);

/** The records the request addresses: exactly one of `where`, `ids` or `all: true`. */
function targetOf(b: JsonObject, issues: Issues): BulkBody['target'] {
  const selectors = ['where', 'ids', 'all'].filter((k) => b[k] !== undefined && b[k] !== false);
  if (selectors.length !== 1)
    issues.push({ path: 'where|ids|all', message: 'exactly one of where, ids or all (true) is required' });
  let target: BulkBody['target'] = { kind: 'all' };
  if (b.ids !== undefined) {
    if (!Array.isArray(b.ids) || !b.ids.every((x) => typeof x === 'string' || typeof x === 'number'))
      issues.push({ path: 'ids', message: 'must be an array of record ids' });
    else target = { kind: 'ids', ids: [...new Set(b.ids.map(String))] };
  }
  if (b.where !== undefined) {
    if (!isJsonObject(b.where)) issues.push({ path: 'where', message: 'must be a where object' });
    else target = { kind: 'where', where: b.where };
  }
  if (b.all !== undefined && b.all !== true && b.all !== false)
    issues.push({ path: 'all', message: 'must be a boolean' });
  return target;
}

/** Each key set or unset must be configured, each value allowed, and no key both set and unset. */
function checkKeys(set: JsonObject, unset: JsonValue[], allowed: Map<string, Allowed>, issues: Issues): void {
  if (Object.keys(set).length === 0 && unset.length === 0)
    issues.push({ path: 'set', message: 'set or unset must name at least one key' });
  for (const [k, v] of Object.entries(set)) {
    const a = allowed.get(k);
    const problem = a ? valueProblem(a, v) : 'not a configured key';
    if (problem) issues.push({ path: `set.${k}`, message: problem });
    if (unset.includes(k)) issues.push({ path: `unset.${k}`, message: 'cannot both set and unset a key' });
  }
  for (const k of unset)
    if (typeof k === 'string' && !allowed.has(k)) issues.push({ path: `unset.${k}`, message: 'not a configured key' });
}

function parseBody(raw: unknown, allowed: Map<string, Allowed>, c: CollectionSlug): BulkBody {
  if (!isJsonObject(raw as JsonValue)) throw new SimHttpError(400, 'The request body must be a JSON object');
  const b = raw as JsonObject;
  const issues: Issues = [];
  for (const k of Object.keys(b)) if (!KNOWN_FIELDS.has(k)) issues.push({ path: k, message: 'unknown field' });
  const target = targetOf(b, issues);
  if (b.dryRun !== undefined && typeof b.dryRun !== 'boolean')
    issues.push({ path: 'dryRun', message: 'must be a boolean' });
  const set = b.set ?? {};
  const unset = b.unset ?? [];
  if (!isJsonObject(set)) issues.push({ path: 'set', message: 'must be an object of key: value' });
  if (!Array.isArray(unset) || !unset.every((x) => typeof x === 'string'))
    issues.push({ path: 'unset', message: 'must be an array of keys' });
  if (isJsonObject(set) && Array.isArray(unset)) checkKeys(set, unset, allowed, issues);
  if (issues.length) throw validationError(c, issues);
  return { target, set: set as JsonObject, unset: unset as string[], dryRun: b.dryRun === true };
}

type Pairs = { key: string; value: JsonValue }[];

const pairsOf = (doc: JsonObject, kind: BulkKind): Pairs => {
  const arr = kind === 'custom-attributes' ? doc.attributes : isJsonObject(doc.theme) ? doc.theme.themeSettings : [];
  return Array.isArray(arr)
    ? arr.filter(isJsonObject).map((p) => ({ key: String(p.key), value: (p.value ?? null) as JsonValue }))
    : [];
};

/** Applies set/unset to a document's pairs; returns the keys actually changed and the new document. */
const applyTo = (
  doc: JsonObject,
  kind: BulkKind,
  set: JsonObject,
  unset: readonly string[],
): { doc: JsonObject; set: string[]; unset: string[] } => {
  const pairs = pairsOf(doc, kind);
  const didSet: string[] = [];
  const didUnset: string[] = [];
  for (const [k, v] of Object.entries(set)) {
    const cur = pairs.find((p) => p.key === k);
    if (cur && JSON.stringify(cur.value) === JSON.stringify(v)) continue;
    if (cur) cur.value = v;
    else pairs.push({ key: k, value: v });
    didSet.push(k);
  }
  for (const k of unset) {
    const i = pairs.findIndex((p) => p.key === k);
    if (i >= 0) {
      pairs.splice(i, 1);
      didUnset.push(k);
    }
  }
  const next = clone(doc);
  if (kind === 'custom-attributes') next.attributes = pairs;
  else next.theme = { ...(isJsonObject(next.theme) ? next.theme : {}), themeSettings: pairs };
  return { doc: next, set: didSet, unset: didUnset };
};

const emptyTally = () => ({
  matched: 0,
  updated: 0,
  wouldUpdate: 0,
  unchanged: 0,
  failed: 0,
  draftSynced: 0,
  draftWouldSync: 0,
  draftSyncSkipped: 0,
  draftSyncFailed: 0,
});
type Tally = ReturnType<typeof emptyTally>;

/** One bulk request's changes, kind and clock, with the tally its records add to. */
interface BulkRun {
  readonly body: BulkBody;
  readonly kind: BulkKind;
  readonly now: number;
  readonly counts: Tally;
}

/** The addressed records in order: by id as given (missing ones included), else matching `where` (or all), by id. */
function targetsOf(
  data: CollectionData,
  target: BulkBody['target'],
  params: SimParams,
): { id: string; rec: StoredRecord | undefined }[] {
  if (target.kind === 'ids') return target.ids.map((id) => ({ id, rec: data.byId.get(id) }));
  const draftMode = params.draft;
  const lc = { locale: params.locale, fallback: params.fallbackLocale };
  const ordered = data.ordered('id', draftMode, lc);
  const pred = target.kind === 'where' ? compileWhere(target.where, data.fields, lc) : () => true;
  return ordered.filter((r) => pred(draftMode ? (r.draft ?? r.main) : r.main)).map((rec) => ({ id: rec.id, rec }));
}

const changedOrWould = (run: BulkRun): 'wouldUpdate' | 'updated' => (run.body.dryRun ? 'wouldUpdate' : 'updated');

/** `draft=true`: the change goes to the draft (the latest version) only. */
function updateDraft(run: BulkRun, id: string, rec: StoredRecord): JsonObject {
  const { body, counts } = run;
  const r = applyTo(rec.draft ?? rec.main, run.kind, body.set, body.unset);
  counts.draftSyncSkipped++;
  const draftSync = { status: 'skipped', set: [], unset: [] };
  if (r.set.length + r.unset.length === 0) {
    counts.unchanged++;
    return { id, status: 'unchanged', set: [], unset: [], draftSync };
  }
  counts[changedOrWould(run)]++;
  if (!body.dryRun)
    rec.draft = {
      ...r.doc,
      _status: 'draft',
      updatedAt: nextStamp(run.now, [rec.main.updatedAt, rec.draft?.updatedAt]),
    };
  return { id, status: changedOrWould(run), set: r.set, unset: r.unset, draftSync };
}

/** A pending draft gets the same change (the draft sync), when it changes anything there. */
function syncDraft(run: BulkRun, rec: StoredRecord): { draftSync: JsonObject; draftDoc: JsonObject | null } {
  const d = rec.draft ? applyTo(rec.draft, run.kind, run.body.set, run.body.unset) : null;
  if (!d || d.set.length + d.unset.length === 0) {
    run.counts.draftSyncSkipped++;
    return { draftSync: { status: 'skipped', set: [], unset: [] }, draftDoc: null };
  }
  if (run.body.dryRun) run.counts.draftWouldSync++;
  else run.counts.draftSynced++;
  return {
    draftSync: { status: run.body.dryRun ? 'wouldSync' : 'synced', set: d.set, unset: d.unset },
    draftDoc: d.doc,
  };
}

/** The published version changes, and a pending draft with it. */
function updatePublished(run: BulkRun, id: string, rec: StoredRecord): JsonObject {
  const { body, counts } = run;
  const r = applyTo(rec.main, run.kind, body.set, body.unset);
  const changed = r.set.length + r.unset.length > 0;
  const { draftSync, draftDoc } = syncDraft(run, rec);
  if (!changed && !draftDoc) {
    counts.unchanged++;
    return { id, status: 'unchanged', set: [], unset: [], draftSync };
  }
  counts[changedOrWould(run)]++;
  if (!body.dryRun) {
    const stamp = nextStamp(run.now, [rec.main.updatedAt, rec.draft?.updatedAt]);
    if (changed) rec.main = { ...r.doc, updatedAt: stamp };
    if (draftDoc) rec.draft = { ...draftDoc, updatedAt: nextStamp(run.now, [stamp, rec.draft?.updatedAt]) };
  }
  return { id, status: changedOrWould(run), set: r.set, unset: r.unset, draftSync };
}

/** A bulk set/unset of custom attributes or theme settings; validation fails whole, records fail one by one. */
export function bulkUpdate(
  deps: { now: () => number },
  t: TenantData,
  c: CollectionSlug,
  kind: BulkKind,
  raw: unknown,
  params: SimParams,
): JsonObject {
  const body = parseBody(raw, allowedKeys(t, c, kind), c);
  const data = t.collections[c];
  const targets = targetsOf(data, body.target, params);
  const run: BulkRun = { body, kind, now: deps.now(), counts: emptyTally() };
  const results: JsonObject[] = [];
  for (const { id, rec } of targets) {
    if (!rec) {
      run.counts.failed++;
      results.push({ id, status: 'failed', set: [], unset: [], error: { message: 'Not Found', status: 404 } });
      continue;
    }
    run.counts.matched++;
    results.push(params.draft ? updateDraft(run, id, rec) : updatePublished(run, id, rec));
  }
  if (!body.dryRun && run.counts.updated > 0) data.changed();
  return {
    dryRun: body.dryRun,
    versionTarget: params.draft ? 'draft' : 'published',
    ...run.counts,
    results,
  };
}
