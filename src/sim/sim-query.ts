import { isJsonObject, type JsonObject, type JsonValue } from '../vocabulary/ids.js';
import { WHERE_OPERATORS } from '../vocabulary/where-operators.js';
import { ISO_RE, LOCALIZED } from './sim-schema.js';

/** The `code` of every `SimHttpError`: what its catchers branch on (`isSimHttpError`), as on a Node error's. */
const SIM_HTTP = 'SIM_HTTP';

/**
 * An error answered as Payload's route handler answers an APIError: `{"errors":[{"name", "data", "message"}]}` when
 * it carries data, `{"errors":[{"message"}]}` otherwise. Not an `UnderstudyError`: an answer of the simulator (or of
 * serve's reads, which parse a read as the simulator does), never a failure of understudy's own.
 */
export class SimHttpError extends Error {
  readonly code = SIM_HTTP;
  constructor(
    readonly status: number,
    message: string,
    readonly data?: JsonValue,
    readonly headers?: Record<string, string>,
    readonly errorName = 'APIError',
  ) {
    super(message);
  }
  body(): JsonObject {
    return {
      errors: [
        this.data !== undefined
          ? { name: this.errorName, data: this.data, message: this.message }
          : { message: this.message },
      ],
    };
  }
}

/** Whether `err` is an answer of the simulator's to send as it is (code `SIM_HTTP`). */
export const isSimHttpError = (err: unknown): err is SimHttpError =>
  err instanceof Error && (err as { readonly code?: unknown }).code === SIM_HTTP;

/** A field's label as Payload derives it from the field name when none is configured (`startDate` → `Start Date`). */
export const labelOf = (path: string): string => {
  const last = path.split('.').pop() ?? path;
  const words = last
    .replace(/_/g, ' ')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/** Payload's ValidationError: 400 with `data.errors[]` of `{label, message, path}`; the message names the labels. */
export const validationError = (collection: string, errors: { path: string; message: string }[]): SimHttpError => {
  const labelled = errors.map((e) => ({ label: labelOf(e.path), message: e.message, path: e.path }));
  return new SimHttpError(
    400,
    `The following field${errors.length > 1 ? 's are' : ' is'} invalid: ${labelled.map((e) => e.label).join(', ')}`,
    { collection, errors: labelled },
    undefined,
    'ValidationError',
  );
};

/** Payload's QueryError for a where/sort on a path that does not exist (an unknown operator reports `field.op`). */
export const queryError = (path: string): SimHttpError =>
  new SimHttpError(400, `The following path cannot be queried: ${path}`, [{ path }], undefined, 'QueryError');

export interface LocaleCtx {
  readonly locale: string;
  readonly fallback: string | null;
}

export const isLocaleObject = (v: JsonValue | undefined): v is JsonObject =>
  isJsonObject(v) && ('en' in v || 'fr' in v) && Object.values(v).every((x) => typeof x === 'string' || x === null);

/** The value of a localized field in one locale, with fallback. `all` gives the stored per-locale object. */
export const resolveLocale = (v: JsonObject, lc: LocaleCtx): JsonValue => {
  if (lc.locale === 'all') return v;
  const own = v[lc.locale];
  if (own !== undefined && own !== null && own !== '') return own;
  if (lc.fallback && lc.fallback !== lc.locale) return v[lc.fallback] ?? null;
  return null;
};

/** Values at a dot path; arrays on the way fan out. A top-level localized field resolves to the request's locale. */
export const valuesAt = (doc: JsonObject, path: readonly string[], lc: LocaleCtx): JsonValue[] => {
  let current: JsonValue[] = [doc];
  for (let i = 0; i < path.length; i++) {
    const seg = path[i] as string;
    const next: JsonValue[] = [];
    for (const c of current) {
      const items = Array.isArray(c) ? c : [c];
      for (const item of items) {
        if (!isJsonObject(item)) continue;
        let v = item[seg];
        if (v === undefined) continue;
        if (i === 0 && LOCALIZED.has(seg) && isLocaleObject(v))
          v = resolveLocale(v, { ...lc, locale: lc.locale === 'all' ? 'en' : lc.locale });
        next.push(v);
      }
    }
    current = next;
  }
  const out: JsonValue[] = [];
  for (const c of current) {
    if (Array.isArray(c)) out.push(...c);
    else out.push(c);
  }
  return out;
};

// Parsed instants of stored strings (NaN: not a date-time). Stored values repeat a lot, so this stays small.
const instants = new Map<string, number>();
const toInstant = (v: JsonValue): number | null => {
  if (typeof v !== 'string') return null;
  let t = instants.get(v);
  if (t === undefined) {
    t = ISO_RE.test(v) ? Date.parse(v) : Number.NaN;
    if (instants.size > 1_000_000) instants.clear();
    instants.set(v, t);
  }
  return Number.isNaN(t) ? null : t;
};

/** Order of two stored values: null last (PostgreSQL's ASC; so first under DESC), dates as instants, numbers, booleans, then strings by code unit. */
export const compareValues = (a: JsonValue | undefined, b: JsonValue | undefined): number => {
  const an = a === undefined || a === null;
  const bn = b === undefined || b === null;
  if (an || bn) return an && bn ? 0 : an ? 1 : -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (typeof a === 'string' && typeof b === 'string') {
    const ta = toInstant(a);
    const tb = ta === null ? null : toInstant(b);
    if (ta !== null && tb !== null) return ta - tb;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  const sa = typeof a === 'string' ? a : JSON.stringify(a);
  const sb = typeof b === 'string' ? b : JSON.stringify(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
};

export interface SortKey {
  readonly path: readonly string[];
  readonly desc: boolean;
}

/** `a,-b` into sort keys; every field must be known. Ties are always broken by id ascending afterwards. */
export const parseSort = (sort: string, known: ReadonlySet<string>): SortKey[] => {
  const keys: SortKey[] = [];
  for (const raw of sort.split(',')) {
    const s = raw.trim();
    if (!s) continue;
    const desc = s.startsWith('-');
    const field = desc ? s.slice(1) : s.startsWith('+') ? s.slice(1) : s;
    const path = field.split('.');
    if (!known.has(path[0] as string)) throw queryError(field);
    keys.push({ path, desc });
  }
  return keys;
};

const sortValue = (doc: JsonObject, key: SortKey, lc: LocaleCtx): JsonValue | undefined => {
  const vs = valuesAt(doc, key.path, lc);
  return vs[0];
};

/** Sorts (stable, decorate-sort-undecorate) by the keys, then by id ascending. */
export const sortDocs = <T>(
  items: readonly T[],
  view: (item: T) => JsonObject,
  keys: readonly SortKey[],
  lc: LocaleCtx,
): T[] => {
  const decorated = items.map((item) => {
    const doc = view(item);
    return { item, id: String(doc.id ?? ''), vals: keys.map((k) => sortValue(doc, k, lc)) };
  });
  decorated.sort((x, y) => {
    for (let i = 0; i < keys.length; i++) {
      const c = compareValues(x.vals[i], y.vals[i]);
      if (c !== 0) return (keys[i] as SortKey).desc ? -c : c;
    }
    return x.id < y.id ? -1 : x.id > y.id ? 1 : 0;
  });
  return decorated.map((d) => d.item);
};

const OPERATORS: ReadonlySet<string> = new Set(WHERE_OPERATORS);

export type Predicate = (doc: JsonObject) => boolean;

const listOperand = (v: JsonValue): JsonValue[] => {
  if (Array.isArray(v)) return v;
  if (isJsonObject(v)) return Object.values(v);
  if (typeof v === 'string') return v.split(',').map((s) => s.trim());
  return [v];
};

const asBool = (v: JsonValue): boolean | null => {
  if (v === true || v === 'true' || v === '1') return true;
  if (v === false || v === 'false' || v === '0') return false;
  return null;
};

/** Equality of a stored scalar and a query operand (query operands arrive as strings). */
const scalarEquals = (actual: JsonValue, operand: JsonValue): boolean => {
  if (operand === null || operand === 'null') return actual === null;
  if (actual === null) return false;
  if (typeof actual === 'number') return actual === Number(operand);
  if (typeof actual === 'boolean') return actual === asBool(operand);
  if (typeof actual === 'string') {
    const ta = toInstant(actual);
    if (ta !== null && typeof operand === 'string') {
      const tb = Date.parse(operand);
      if (!Number.isNaN(tb) && /^\d{4}-\d\d-\d\d/.test(operand)) return ta === tb;
    }
    return actual === String(operand);
  }
  return JSON.stringify(actual) === JSON.stringify(operand);
};

/** Ordering of a stored scalar against an operand, or null when they cannot be compared. */
const scalarCompare = (actual: JsonValue, operand: JsonValue): number | null => {
  if (actual === null || operand === null) return null;
  if (typeof actual === 'number') {
    const n = Number(operand);
    return Number.isNaN(n) ? null : actual - n;
  }
  if (typeof actual === 'string') {
    const ta = toInstant(actual);
    if (ta !== null) {
      const tb = typeof operand === 'string' || typeof operand === 'number' ? Date.parse(String(operand)) : Number.NaN;
      return Number.isNaN(tb) ? null : ta - tb;
    }
    const o = String(operand);
    return actual < o ? -1 : actual > o ? 1 : 0;
  }
  return null;
};

const matchOp = (op: string, values: JsonValue[], present: boolean, operand: JsonValue): boolean => {
  switch (op) {
    case 'equals':
      return operand === null || operand === 'null'
        ? values.length === 0 || values.some((v) => v === null)
        : values.some((v) => scalarEquals(v, operand));
    case 'not_equals':
      return operand === null || operand === 'null'
        ? values.some((v) => v !== null)
        : !values.some((v) => scalarEquals(v, operand));
    case 'in': {
      const list = listOperand(operand);
      return values.some((v) => list.some((o) => scalarEquals(v, o)));
    }
    case 'not_in': {
      const list = listOperand(operand);
      return !values.some((v) => list.some((o) => scalarEquals(v, o)));
    }
    case 'greater_than':
      return values.some((v) => (scalarCompare(v, operand) ?? -1) > 0);
    case 'greater_than_equal':
      return values.some((v) => (scalarCompare(v, operand) ?? -1) >= 0);
    case 'less_than':
      return values.some((v) => (scalarCompare(v, operand) ?? 1) < 0);
    case 'less_than_equal':
      return values.some((v) => (scalarCompare(v, operand) ?? 1) <= 0);
    case 'exists': {
      // Payload's MongoDB adapter (`buildExistsQuery`) treats an empty string as absent: `exists=false` matches it.
      const want = asBool(operand);
      const has = present && values.some((v) => v !== null && v !== '');
      return want === false ? !has : has;
    }
    case 'like': {
      const words = String(operand).toLowerCase().split(/\s+/).filter(Boolean);
      return values.some((v) => typeof v === 'string' && words.every((w) => v.toLowerCase().includes(w)));
    }
    case 'contains': {
      const needle = String(operand).toLowerCase();
      return values.some((v) => typeof v === 'string' && v.toLowerCase().includes(needle));
    }
    default:
      return false;
  }
};

/** A related collection as a `where` through a relationship (`event.title`) sees it. */
export interface RelatedScope {
  readonly known: ReadonlySet<string>;
  /** The related record as the read sees it, or undefined (missing, or invisible to the read). */
  readonly lookup: (id: string) => JsonObject | undefined;
  readonly relation: Relation;
}
/** The related scope of a relationship field, or undefined when the field is not a relationship. */
export type Relation = (field: string) => RelatedScope | undefined;

const noRelation: Relation = () => undefined;

/**
 * Compiles a Payload `where` into a predicate over stored documents: `{field: {op: value}}`, dot paths or nested
 * objects for sub-fields, `and`/`or` arrays (or index-keyed objects, as qs may give) nesting freely; a path through a
 * relationship field (`event.title`) filters on the related record, as Payload's join does.
 */
export const compileWhere = (
  where: JsonValue,
  known: ReadonlySet<string>,
  lc: LocaleCtx,
  relation: Relation = noRelation,
): Predicate => {
  if (!isJsonObject(where)) throw new SimHttpError(400, 'where must be an object');
  const parts: Predicate[] = [];
  for (const [key, value] of Object.entries(where)) {
    const lower = key.toLowerCase();
    if (lower === 'and' || lower === 'or') {
      const subs = listOperand(value).map((w) => compileWhere(w, known, lc, relation));
      parts.push(lower === 'and' ? (d) => subs.every((p) => p(d)) : (d) => subs.some((p) => p(d)));
      continue;
    }
    parts.push(compileField(key.split('.'), value, known, lc, relation));
  }
  return (d) => parts.every((p) => p(d));
};

const compileField = (
  path: string[],
  cond: JsonValue,
  known: ReadonlySet<string>,
  lc: LocaleCtx,
  relation: Relation,
): Predicate => {
  const root = path[0] as string;
  if (!known.has(root)) throw queryError(path.join('.'));
  if (!isJsonObject(cond)) throw new SimHttpError(400, `where on ${path.join('.')} needs an operator`);
  const related = path.length > 1 && path[1] !== 'id' ? relation(root) : undefined;
  if (related) {
    const inner = compileField(path.slice(1), cond, related.known, lc, related.relation);
    return (d) => {
      const v = d[root];
      for (const id of Array.isArray(v) ? v : [v]) {
        if (typeof id !== 'string') continue;
        const doc = related.lookup(id);
        if (doc && inner(doc)) return true;
      }
      return false;
    };
  }
  const relPath = path.length === 2 && path[1] === 'id' && relation(root) ? [root] : path;
  const parts: Predicate[] = [];
  for (const [op, operand] of Object.entries(cond)) {
    if (OPERATORS.has(op)) {
      const test = compileOp(op, operand);
      if (relPath.length === 1 && !LOCALIZED.has(root)) {
        // Fast path for top-level fields (the common case: updatedAt, id, relationships).
        parts.push((d) => {
          const v = d[root];
          if (v === undefined) return test(EMPTY, false);
          return test(Array.isArray(v) ? v : [v], true);
        });
      } else {
        parts.push((d) => {
          const values = valuesAt(d, relPath, lc);
          return test(values, values.length > 0);
        });
      }
    } else if (isJsonObject(operand)) {
      parts.push(compileField([...path, op], operand, known, lc, relation));
    } else {
      throw queryError(`${path.join('.')}.${op}`);
    }
  }
  return parts.length === 1 ? (parts[0] as Predicate) : (d) => parts.every((p) => p(d));
};

const EMPTY: JsonValue[] = [];

/** An operator with its operand parsed once: a test over a field's values. */
const compileOp = (op: string, operand: JsonValue): ((values: JsonValue[], present: boolean) => boolean) => {
  if (op === 'greater_than' || op === 'greater_than_equal' || op === 'less_than' || op === 'less_than_equal') {
    const instant =
      typeof operand === 'string' || typeof operand === 'number' ? Date.parse(String(operand)) : Number.NaN;
    const num = Number(operand);
    const str = String(operand);
    const ok =
      op === 'greater_than'
        ? (c: number) => c > 0
        : op === 'greater_than_equal'
          ? (c: number) => c >= 0
          : op === 'less_than'
            ? (c: number) => c < 0
            : (c: number) => c <= 0;
    return (values) => {
      for (const v of values) {
        let c: number | null = null;
        if (typeof v === 'number') c = Number.isNaN(num) ? null : v - num;
        else if (typeof v === 'string') {
          const t = toInstant(v);
          if (t !== null) c = Number.isNaN(instant) ? null : t - instant;
          else c = v < str ? -1 : v > str ? 1 : 0;
        }
        if (c !== null && ok(c)) return true;
      }
      return false;
    };
  }
  return (values, present) => matchOp(op, values, present, operand);
};

const truthy = (v: JsonValue | undefined): boolean => v === true || v === 'true' || v === '1';
const falsy = (v: JsonValue | undefined): boolean => v === false || v === 'false' || v === '0';

/** Payload's `select`: include mode when any leaf is true (id always kept), exclude mode when all are false. */
export const applySelect = (doc: JsonObject, select: JsonObject, keepId = true): JsonObject => {
  const leaves: JsonValue[] = [];
  const collect = (o: JsonObject): void => {
    for (const v of Object.values(o)) isJsonObject(v) ? collect(v) : leaves.push(v);
  };
  collect(select);
  const include = leaves.some((v) => truthy(v));
  return include ? pick(doc, select, keepId) : omit(doc, select);
};

const pick = (doc: JsonObject, sel: JsonObject, keepId: boolean): JsonObject => {
  const out: JsonObject = {};
  if (keepId && 'id' in doc) out.id = doc.id as JsonValue;
  for (const [k, v] of Object.entries(sel)) {
    if (!(k in doc)) continue;
    const val = doc[k] as JsonValue;
    if (isJsonObject(v)) {
      if (isJsonObject(val)) out[k] = pick(val, v, false);
      else if (Array.isArray(val)) out[k] = val.map((x) => (isJsonObject(x) ? pick(x, v, false) : x));
      else out[k] = val;
    } else if (truthy(v)) out[k] = val;
  }
  return out;
};

const omit = (doc: JsonObject, sel: JsonObject): JsonObject => {
  const out: JsonObject = { ...doc };
  for (const [k, v] of Object.entries(sel)) {
    if (!(k in out)) continue;
    if (isJsonObject(v)) {
      const val = out[k] as JsonValue;
      if (isJsonObject(val)) out[k] = omit(val, v);
    } else if (falsy(v)) delete out[k];
  }
  return out;
};
