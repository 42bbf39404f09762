import { sql } from 'kysely';
import type { JsonValue } from '../../vocabulary/ids.js';
import type { CmpOp, JsonSql, Sql, ValueSql } from './json-sql.js';
import { readSource } from './read-source.js';
import { type Filter, type FilterOp, listOperand, type ReadView } from './read-spec.js';
import { type TypedField, typedField } from './typed-fields.js';

const TRUE = sql`1 = 1`;
const FALSE = sql`1 = 0`;

const RANGE: Readonly<Partial<Record<FilterOp, CmpOp>>> = {
  greater_than: '>',
  greater_than_equal: '>=',
  less_than: '<',
  less_than_equal: '<=',
};

/** An operand as the upstream reads it against each type of value, parsed once. */
interface Operand {
  readonly isNull: boolean;
  readonly num: number | null;
  readonly bool: boolean | null;
  /** The instant a date-like operand names (`2026-03-01…`), as UTC ISO text; null otherwise. */
  readonly date: string | null;
  readonly str: string;
}

const asBool = (v: JsonValue): boolean | null =>
  v === true || v === 'true' || v === '1' ? true : v === false || v === 'false' || v === '0' ? false : null;

// Instants beyond what both engines hold (Date.parse reads `inst-40141` as the year 40141) are held at the edge.
const EARLIEST = Date.parse('0001-01-01T00:00:00.000Z');
const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
const isoOf = (ms: number): string | null =>
  Number.isNaN(ms) ? null : new Date(Math.min(LATEST, Math.max(EARLIEST, ms))).toISOString();

function operandOf(v: JsonValue): Operand {
  const n = Number(v);
  const dated = typeof v === 'string' && /^\d{4}-\d\d-\d\d/.test(v) ? isoOf(Date.parse(v)) : null;
  return {
    isNull: v === null || v === 'null',
    num: Number.isNaN(n) ? null : n,
    bool: asBool(v),
    date: dated,
    str: typeof v === 'string' ? v : String(v),
  };
}

const any = (parts: readonly Sql[]): Sql => (parts.length === 0 ? FALSE : sql`(${sql.join(parts, sql` or `)})`);
const all = (parts: readonly Sql[]): Sql => (parts.length === 0 ? TRUE : sql`(${sql.join(parts, sql` and `)})`);

/** A value equal to the operand, as the upstream's equality reads a stored value against a query string. */
function equalTo(v: ValueSql, o: Operand): Sql {
  if (o.isNull) return v.isNull;
  const parts: Sql[] = [];
  if (o.num !== null) parts.push(v.numberIs('=', o.num));
  if (o.bool !== null) parts.push(v.boolIs(o.bool));
  if (o.date !== null) parts.push(v.instantIs('=', o.date), sql`(${v.notInstant} and ${v.textIs('=', o.str)})`);
  else parts.push(v.textIs('=', o.str));
  return any(parts);
}

/** A value in range of the operand: numbers as numbers, instants as instants, other strings by code unit. */
function inRange(v: ValueSql, op: CmpOp, raw: JsonValue): Sql {
  const o = operandOf(raw);
  const instant = typeof raw === 'string' || typeof raw === 'number' ? isoOf(Date.parse(String(raw))) : null;
  const parts: Sql[] = [sql`(${v.notInstant} and ${v.textIs(op, o.str)})`];
  if (o.num !== null) parts.push(v.numberIs(op, o.num));
  if (instant !== null) parts.push(v.instantIs(op, instant));
  return any(parts);
}

/** The words of a `like`: every one must be found, in any case. */
const likeWords = (raw: JsonValue): string[] => String(raw).split(/\s+/).filter(Boolean);

type Some = (pred: (v: ValueSql) => Sql) => Sql;

/** One operator over the values `some` ranges over. */
function opSql(op: FilterOp, raw: JsonValue, some: Some): Sql {
  const range = RANGE[op];
  if (range) return some((v) => inRange(v, range, raw));
  switch (op) {
    case 'equals':
    case 'not_equals': {
      const o = operandOf(raw);
      if (o.isNull)
        return op === 'equals'
          ? sql`(not ${some(() => TRUE)} or ${some((v) => v.isNull)})`
          : some((v) => sql`not ${v.isNull}`);
      const hit = some((v) => equalTo(v, o));
      return op === 'equals' ? hit : sql`not ${hit}`;
    }
    case 'in':
    case 'not_in': {
      const list = listOperand(raw).map(operandOf);
      const hit = some((v) => any(list.map((o) => equalTo(v, o))));
      return op === 'in' ? hit : sql`not ${hit}`;
    }
    case 'like':
      return some((v) => all([v.isString, ...likeWords(raw).map((w) => v.holds(w))]));
    case 'contains':
      return some((v) => v.holds(String(raw)));
    default: {
      // exists: an empty string counts as absent (Payload's MongoDB adapter), as does null.
      const has = some((v) => sql`(not ${v.isNull} and not (${v.isString} and ${v.textIs('=', '')}))`);
      return asBool(raw) === false ? sql`not ${has}` : has;
    }
  }
}

/** A typed column answering an operator exactly as the record's JSON would, or null (the JSON is read then). */
function fastOp(col: TypedField, op: FilterOp, raw: JsonValue, json: JsonSql): Sql | null {
  const c = col.column;
  if (col.kind === 'instant') {
    const range = RANGE[op];
    if (range) {
      const at = typeof raw === 'string' || typeof raw === 'number' ? isoOf(Date.parse(String(raw))) : null;
      return at === null ? null : sql`${c} ${sql.raw(range)} ${at}`;
    }
    if (op === 'exists') return asBool(raw) === false ? sql`${c} is null` : sql`${c} is not null`;
  }
  if (col.kind === 'text') {
    if (op === 'like') return all([sql`${c} is not null`, ...likeWords(raw).map((w) => json.holds(c, w))]);
    if (op === 'contains') return json.holds(c, String(raw));
    if (op === 'exists')
      return asBool(raw) === false ? sql`(${c} is null or ${c} = '')` : sql`(${c} is not null and ${c} <> '')`;
  }
  if (op !== 'equals' && op !== 'not_equals' && op !== 'in' && op !== 'not_in') return null;
  const list = (op === 'in' || op === 'not_in' ? listOperand(raw) : [raw]).map(operandOf);
  if (list.some((o) => o.isNull)) return null;
  const values = col.kind === 'instant' ? list.map((o) => o.date) : list.map((o) => o.str);
  if (values.some((x) => x === null)) return null;
  // Equality needs no collation (and a collated column would keep PostgreSQL from its index).
  const hit = values.length === 1 ? sql`${c} = ${values[0]}` : sql`${c} in (${sql.join(values)})`;
  return op === 'equals' || op === 'in' ? hit : sql`(${c} is null or not ${hit})`;
}

/** The record key answers every operator itself: it is always there, a string, never an instant. */
function keyOp(c: Sql, op: FilterOp, raw: JsonValue, json: JsonSql): Sql {
  const key: ValueSql = {
    isNull: FALSE,
    isString: TRUE,
    isNumber: FALSE,
    numberIs: () => FALSE,
    boolIs: () => FALSE,
    textIs: (o, s) =>
      o === '=' || o === '<>' ? sql`${c} ${sql.raw(o)} ${s}` : sql`${json.collated(c)} ${sql.raw(o)} ${s}`,
    instantIs: () => FALSE,
    notInstant: TRUE,
    holds: (needle) => json.holds(c, needle),
    textIn: (sub) => sql`${c} in (${sub})`,
  };
  return opSql(op, raw, (pred) => pred(key));
}

/**
 * A checked `where` as one SQL condition on the row `row` of `view`: typed columns where they answer exactly as the
 * JSON would (indexes then serve), the record's JSON otherwise.
 */
export function compileFilter(f: Filter, view: ReadView, row: string, json: JsonSql): Sql {
  if (f.kind === 'rel') return relatedFilter(f, view, row, json);
  if (f.kind !== 'cond') {
    const parts = f.parts.map((p) => compileFilter(p, view, row, json));
    return f.kind === 'and' ? all(parts) : any(parts);
  }
  const root = f.path[0] as string;
  if (view.computed.has(root)) return opSql(f.op, f.operand, () => FALSE);
  const col = f.path.length === 1 ? typedField(view, row, root) : null;
  if (col?.kind === 'key') return keyOp(col.column, f.op, f.operand, json);
  const fast = col ? fastOp(col, f.op, f.operand, json) : null;
  return fast ?? opSql(f.op, f.operand, (pred) => json.someValue(row, f.path, view.locale, pred));
}

/**
 * A condition through a relationship (`event.title`): some id the field holds (a list's items each) names a live
 * record of the related copy that passes the inner condition, as the upstream's join reads it; none when the mirror
 * holds no copy of the related collection.
 */
function relatedFilter(f: Extract<Filter, { kind: 'rel' }>, view: ReadView, row: string, json: JsonSql): Sql {
  if (!f.view) return FALSE;
  const alias = `${row}_r`;
  const { table, scope } = readSource(f.view, alias);
  const sub = sql`select ${sql.ref(`${alias}.id`)} from ${table} where ${scope} and ${compileFilter(f.inner, f.view, alias, json)}`;
  const col = typedField(view, row, f.field);
  if (col?.kind === 'text') return sql`${col.column} in (${sub})`;
  return json.someValue(row, [f.field], view.locale, (v) => v.textIn(sub));
}
