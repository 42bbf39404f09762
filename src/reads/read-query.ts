import { parseSort, queryError, SimHttpError } from '../sim/sim-query.js';
import { LOCALIZED, RELATIONSHIPS } from '../sim/sim-schema.js';
import type { Filter, FilterOp, ReadView, SortKey } from '../store/reads/read-spec.js';
import { FILTER_OPS, listOperand } from '../store/reads/read-spec.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import { isJsonObject, type JsonValue } from '../vocabulary/ids.js';

const OPERATORS: ReadonlySet<string> = new Set(FILTER_OPS);

/** How deep a `where` may nest (objects and arrays, the `where` itself counted) and how many conditions it may hold. */
export const WHERE_MAX_DEPTH = 8;
export const WHERE_MAX_CONDITIONS = 100;

/** Nesting depth of a `where`: objects and arrays count one level each. */
export const whereDepth = (v: JsonValue | undefined): number =>
  v !== null && typeof v === 'object' ? 1 + Math.max(0, ...Object.values(v).map(whereDepth)) : 0;

/** How many operator conditions a `where` holds, wherever they sit. */
export const whereConditions = (v: JsonValue | undefined): number => {
  if (v === null || typeof v !== 'object') return 0;
  let n = 0;
  for (const [k, x] of Object.entries(v)) n += (OPERATORS.has(k) && !Array.isArray(v) ? 1 : 0) + whereConditions(x);
  return n;
};

/** The fields a path may start at. */
export type FieldNames = Pick<ReadonlySet<string>, 'has'>;

/** A related collection as a `where` through a relationship sees it: its copy for this read and its field names. */
export interface RelatedFields {
  /** The copy the read sees of `c`, or null when the mirror holds none (any field is taken then; none matches). */
  readonly view: ReadView | null;
  /** Its field names (null: not known, every path is taken). */
  readonly known: FieldNames | null;
}

/** What checking a `where` needs: the fields of the collection read, and of each related one on demand. */
export interface WhereFields {
  readonly known: FieldNames;
  related(c: CollectionSlug): Promise<RelatedFields>;
}

/**
 * A `where` checked against the collection's fields and normalised, as the upstream reads it: `and`/`or` (any
 * case) over lists, dot paths or nested objects for sub-fields, `rel.id` for a relationship itself, `rel.field`
 * through it (the related record's field, as Payload's join reads it). A bad one throws the upstream's 400 (an
 * unknown path, a field without an operator).
 */
export async function filterOf(where: JsonValue, c: CollectionSlug, fields: WhereFields): Promise<Filter> {
  if (!isJsonObject(where)) throw new SimHttpError(400, 'where must be an object');
  const parts: Filter[] = [];
  for (const [key, value] of Object.entries(where)) {
    const lower = key.toLowerCase();
    if (lower === 'and' || lower === 'or') {
      const subs: Filter[] = [];
      for (const w of listOperand(value)) subs.push(await filterOf(w, c, fields));
      parts.push({ kind: lower, parts: subs });
      continue;
    }
    parts.push(await fieldFilter(key.split('.'), value, c, fields));
  }
  return parts.length === 1 ? (parts[0] as Filter) : { kind: 'and', parts };
}

async function fieldFilter(path: string[], cond: JsonValue, c: CollectionSlug, fields: WhereFields): Promise<Filter> {
  const root = path[0] as string;
  if (!fields.known.has(root)) throw queryError(path.join('.'));
  if (!isJsonObject(cond)) throw new SimHttpError(400, `where on ${path.join('.')} needs an operator`);
  const rel = RELATIONSHIPS[c].find((r) => r.field === root);
  if (rel && path.length > 1 && path[1] !== 'id') {
    const to = await fields.related(rel.to);
    const inner = await fieldFilter(path.slice(1), cond, rel.to, {
      known: to.known ?? { has: () => true },
      related: fields.related,
    });
    return { kind: 'rel', field: root, view: to.view, inner };
  }
  const at = path.length === 2 && path[1] === 'id' && rel ? [root] : path;
  const parts: Filter[] = [];
  for (const [op, operand] of Object.entries(cond)) {
    if (OPERATORS.has(op)) parts.push({ kind: 'cond', path: at, op: op as FilterOp, operand });
    else if (isJsonObject(operand)) parts.push(await fieldFilter([...path, op], operand, c, fields));
    else throw queryError(`${path.join('.')}.${op}`);
  }
  return parts.length === 1 ? (parts[0] as Filter) : { kind: 'and', parts };
}

/** `sort` as keys, each field known (the upstream's 400 otherwise); ties are broken by the key afterwards. */
export const sortOf = (sort: string, known: ReadonlySet<string>): SortKey[] => parseSort(sort, known);

/** The localized top-level fields (stored per locale in a copy of every locale). */
export const LOCALIZED_FIELDS: ReadonlySet<string> = LOCALIZED;
