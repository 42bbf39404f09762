import { parseSort, queryError, SimHttpError } from '../sim/sim-query.js';
import { LOCALIZED, RELATIONSHIPS } from '../sim/sim-schema.js';
import type { Filter, FilterOp, SortKey } from '../store/reads/read-spec.js';
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

/**
 * A `where` checked against the collection's fields and normalised, as the upstream reads it: `and`/`or` (any
 * case) over lists, dot paths or nested objects for sub-fields, `rel.id` for a relationship itself. A bad one throws
 * the upstream's 400 (an unknown path, a field without an operator).
 */
export function filterOf(where: JsonValue, c: CollectionSlug, known: ReadonlySet<string>): Filter {
  if (!isJsonObject(where)) throw new SimHttpError(400, 'where must be an object');
  const parts: Filter[] = [];
  for (const [key, value] of Object.entries(where)) {
    const lower = key.toLowerCase();
    if (lower === 'and' || lower === 'or') {
      parts.push({ kind: lower, parts: listOperand(value).map((w) => filterOf(w, c, known)) });
      continue;
    }
    parts.push(fieldFilter(key.split('.'), value, c, known));
  }
  return parts.length === 1 ? (parts[0] as Filter) : { kind: 'and', parts };
}

function fieldFilter(path: string[], cond: JsonValue, c: CollectionSlug, known: ReadonlySet<string>): Filter {
  const root = path[0] as string;
  if (!known.has(root)) throw queryError(path.join('.'));
  if (!isJsonObject(cond)) throw new SimHttpError(400, `where on ${path.join('.')} needs an operator`);
  const isRel = RELATIONSHIPS[c].some((r) => r.field === root);
  const at = path.length === 2 && path[1] === 'id' && isRel ? [root] : path;
  const parts: Filter[] = [];
  for (const [op, operand] of Object.entries(cond)) {
    if (OPERATORS.has(op)) parts.push({ kind: 'cond', path: at, op: op as FilterOp, operand });
    else if (isJsonObject(operand)) parts.push(fieldFilter([...path, op], operand, c, known));
    else throw queryError(`${path.join('.')}.${op}`);
  }
  return parts.length === 1 ? (parts[0] as Filter) : { kind: 'and', parts };
}

/** `sort` as keys, each field known (the upstream's 400 otherwise); ties are broken by the key afterwards. */
export const sortOf = (sort: string, known: ReadonlySet<string>): SortKey[] => parseSort(sort, known);

/** The localized top-level fields (stored per locale in a copy of every locale). */
export const LOCALIZED_FIELDS: ReadonlySet<string> = LOCALIZED;
