import { type RawBuilder, sql } from 'kysely';
import type { LocaleRead } from './read-spec.js';

export type Sql = RawBuilder<unknown>;
export type CmpOp = '=' | '<>' | '>' | '>=' | '<' | '<=';

/**
 * One JSON value of a record, as SQL sees it: its type, and comparisons that hold only for a value of the matching
 * type (a number compared with a number, a string by code unit, an instant as an instant).
 */
export interface ValueSql {
  readonly isNull: Sql;
  readonly isString: Sql;
  readonly isNumber: Sql;
  numberIs(op: CmpOp, n: number): Sql;
  boolIs(b: boolean): Sql;
  /** A string value compared by code unit with `s`. */
  textIs(op: CmpOp, s: string): Sql;
  /** A string value that is an ISO 8601 instant (with its zone), compared as an instant with `iso`. */
  instantIs(op: CmpOp, iso: string): Sql;
  /** A string value that is no ISO 8601 instant. */
  readonly notInstant: Sql;
  /** A string value holding `needle`, both lower-cased alike. */
  holds(needle: string): Sql;
  /** A string value that is one of the texts the one-column subquery `sub` gives. */
  textIn(sub: Sql): Sql;
}

/** The JSON functions of one engine that a read needs: the values at a path of a row, and a first value to sort by. */
export interface JsonSql {
  /** True when some value at `path` of `row`'s record (arrays on the way fan out) passes `pred`. */
  someValue(row: string, path: readonly string[], locale: LocaleRead | null, pred: (v: ValueSql) => Sql): Sql;
  /** The sort keys of the first value at `path` (nulls, objects and absent values give NULL keys), in order. */
  sortKeys(row: string, path: readonly string[], locale: LocaleRead | null): readonly Sql[];
  /** A typed column's text compared by code unit. */
  collated(column: Sql): Sql;
  /** Lower-cases text alike on both sides of a comparison. */
  holds(text: Sql, needle: string): Sql;
  /** A query of the distinct top-level keys (`k`) of the `doc`s of the subquery `docs`. */
  keysOf(docs: Sql): Sql;
  /** A `from` item spreading top-level `field` of `row` into its items (a list's, or the value itself) ... */
  items(row: string, field: string): Sql;
  /** ... and the text of each item. */
  readonly itemText: Sql;
  /** JSON text of the `[key, at]` rows of the one-row-per-pair subquery `pairs` (`[]` for none). */
  pairsJson(pairs: Sql): Sql;
}

const ISO_SQL_RE = '^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d(:\\d\\d(\\.\\d+)?)?(Z|[+-]\\d\\d:?\\d\\d)$';
const cmp = (op: CmpOp): Sql => sql.raw(op);

/** Which top-level field a path starts at, and whether the read resolves it per locale. */
const localized = (path: readonly string[], locale: LocaleRead | null): LocaleRead | null =>
  locale?.fields.has(path[0] as string) ? locale : null;

// ------------------------------------------------------------------------------------------------ SQLite

/** SQLite's JSON path of one key: `$."key"` (a key holding `"` cannot be written: it matches nothing). */
const sqlitePath = (key: string): string | null => (key.includes('"') ? null : `$."${key}"`);

/** SQLite: the JSON of a localized field resolved as the upstream resolves it, or the field itself. */
function sqliteRoot(row: Sql, key: string, lc: LocaleRead | null): Sql {
  const p = sqlitePath(key) as string;
  const doc = sql`${row}.doc`;
  if (!lc) return sql`(${doc} -> ${p})`;
  const own = `$."${key}"."${lc.locale}"`;
  const fb = lc.fallback && lc.fallback !== lc.locale ? sql`${doc} -> ${`$."${key}"."${lc.fallback}"`}` : sql`null`;
  return sql`(case when json_type(${doc}, ${p}) = 'object' then coalesce(case when json_extract(${doc}, ${own}) <> '' then ${doc} -> ${own} end, ${fb}, 'null') else ${doc} -> ${p} end)`;
}

/** SQLite: a JSON value spread into `json_each` rows (an array's elements, or the value itself; nothing if absent). */
const spread = (json: Sql): Sql =>
  sql`json_each(case when ${json} is null then '[]' when json_type(${json}) = 'array' then ${json} else json_array(json(${json})) end)`;

/** SQLite: the `json_each` of key `key` of each object value of the previous step `prev`. */
const step = (prev: string, key: string): Sql => {
  const p = sqlitePath(key) as string;
  const v = sql.ref(`${prev}.value`);
  const t = sql.ref(`${prev}.type`);
  return sql`json_each(case when ${t} <> 'object' then '[]' when json_type(${v}, ${p}) is null then '[]' when json_type(${v}, ${p}) = 'array' then ${v} -> ${p} else json_array(json(${v} -> ${p})) end)`;
};

const sqliteInstant = (atom: Sql): Sql =>
  sql`(case when ${atom} glob '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]*' and (${atom} glob '*Z' or ${atom} glob '*[+-][0-9][0-9]:[0-9][0-9]') then strftime('%Y-%m-%dT%H:%M:%fZ', ${atom}) end)`;

function sqliteValue(alias: string): ValueSql {
  const type = sql.ref(`${alias}.type`);
  const atom = sql.ref(`${alias}.atom`);
  const isString = sql`${type} = 'text'`;
  return {
    isNull: sql`${type} = 'null'`,
    isString,
    isNumber: sql`${type} in ('integer', 'real')`,
    numberIs: (op, n) => sql`(${type} in ('integer', 'real') and ${atom} ${cmp(op)} ${n})`,
    boolIs: (b) => sql`${type} = ${b ? 'true' : 'false'}`,
    textIs: (op, s) => sql`(${isString} and ${atom} ${cmp(op)} ${s})`,
    instantIs: (op, iso) => sql`(${isString} and ${sqliteInstant(atom)} ${cmp(op)} ${iso})`,
    notInstant: sql`(${isString} and ${sqliteInstant(atom)} is null)`,
    holds: (needle) => sql`(${isString} and instr(lower(${atom}), lower(${needle})) > 0)`,
    textIn: (sub) => sql`(${isString} and ${atom} in (${sub}))`,
  };
}

/** SQLite: `from` items and the last alias of the values at `path` of `row`. */
function sqliteValues(row: string, path: readonly string[], locale: LocaleRead | null): { from: Sql; last: string } {
  const r = sql.ref(row);
  const items: Sql[] = [sql`${spread(sqliteRoot(r, path[0] as string, localized(path, locale)))} as ${sql.ref('j0')}`];
  for (let i = 1; i < path.length; i++) items.push(sql`${step(`j${i - 1}`, path[i] as string)} as ${sql.ref(`j${i}`)}`);
  return { from: sql.join(items, sql`, `), last: `j${path.length - 1}` };
}

export const sqliteJson: JsonSql = {
  someValue(row, path, locale, pred) {
    if (path.some((k) => sqlitePath(k) === null)) return sql`0`;
    const { from, last } = sqliteValues(row, path, locale);
    return sql`exists (select 1 from ${from} where ${pred(sqliteValue(last))})`;
  },
  sortKeys(row, path, locale) {
    if (path.some((k) => sqlitePath(k) === null)) return [sql`null`];
    const { from, last } = sqliteValues(row, path, locale);
    const type = sql.ref(`${last}.type`);
    const atom = sql.ref(`${last}.atom`);
    return [
      sql`(select case when ${type} in ('integer', 'real', 'true', 'false') then ${atom} when ${type} = 'text' then coalesce(${sqliteInstant(atom)}, ${atom}) end from ${from} limit 1)`,
    ];
  },
  collated: (column) => column,
  holds: (text, needle) => sql`instr(lower(${text}), lower(${needle})) > 0`,
  keysOf: (docs) => sql`select distinct j.key as k from (${docs}) as s, json_each(s.doc) as j`,
  items(row, field) {
    const p = sqlitePath(field) ?? '$."\u0000"';
    const doc = sql.ref(`${row}.doc`);
    return sql`json_each(case when json_type(${doc}, ${p}) = 'array' then ${doc} -> ${p} else json_array(${doc} -> ${p}) end) as jt`;
  },
  itemText: sql`jt.atom`,
  pairsJson: (pairs) => sql`(select json_group_array(json_array(p.k, p.at)) from (${pairs}) as p)`,
};

// ------------------------------------------------------------------------------------------------ PostgreSQL

/** A jsonpath member accessor for one key, quoted. */
const pathKey = (k: string): string => `."${k.replace(/["\\]/g, (c) => `\\${c}`)}"`;

function postgresRoot(row: Sql, key: string, lc: LocaleRead | null): Sql {
  const field = sql`${row}.doc -> ${key}::text`;
  if (!lc) return field;
  const fb = lc.fallback && lc.fallback !== lc.locale ? sql`${field} -> ${lc.fallback}::text` : sql`null`;
  return sql`(case when jsonb_typeof(${field}) = 'object' then coalesce(case when (${field} ->> ${lc.locale}::text) <> '' then ${field} -> ${lc.locale}::text end, ${fb}, 'null'::jsonb) else ${field} end)`;
}

/** PostgreSQL: the values at `path` of `row` as the rows of `jv(v)`: lax jsonpath unwraps arrays on the way. */
function postgresValues(row: string, path: readonly string[], locale: LocaleRead | null): Sql {
  const root = postgresRoot(sql.ref(row), path[0] as string, localized(path, locale));
  const rest = `lax $${path.slice(1).map(pathKey).join('')}[*]`;
  return sql`jsonb_path_query(${root}, ${rest}::jsonpath) as jv(v)`;
}

const pgText = sql`(jv.v #>> '{}')`;
const pgIsString = sql`jsonb_typeof(jv.v) = 'string'`;
const pgInstant = (v: Sql): Sql =>
  sql`(case when jsonb_typeof(${v}) = 'string' and (${v} #>> '{}') ~ ${ISO_SQL_RE}::text then (${v} #>> '{}')::timestamptz end)`;

const postgresValue: ValueSql = {
  isNull: sql`jsonb_typeof(jv.v) = 'null'`,
  isString: pgIsString,
  isNumber: sql`jsonb_typeof(jv.v) = 'number'`,
  numberIs: (op, n) => sql`(jsonb_typeof(jv.v) = 'number' and jv.v ${cmp(op)} to_jsonb(${n}::numeric))`,
  boolIs: (b) => sql`jv.v = ${b ? 'true' : 'false'}::jsonb`,
  textIs: (op, s) => sql`(${pgIsString} and ${pgText} collate "C" ${cmp(op)} ${s}::text)`,
  instantIs: (op, iso) => sql`(${pgInstant(sql`jv.v`)} ${cmp(op)} ${iso}::timestamptz)`,
  notInstant: sql`(${pgIsString} and ${pgInstant(sql`jv.v`)} is null)`,
  holds: (needle) => sql`(${pgIsString} and strpos(lower(${pgText}), lower(${needle}::text)) > 0)`,
  textIn: (sub) => sql`(${pgIsString} and ${pgText} in (${sub}))`,
};

export const postgresJson: JsonSql = {
  someValue: (row, path, locale, pred) =>
    sql`exists (select 1 from ${postgresValues(row, path, locale)} where ${pred(postgresValue)})`,
  sortKeys(row, path, locale) {
    const first = sql`(select jv.v from ${postgresValues(row, path, locale)} limit 1)`;
    const utc = sql`to_char(${pgInstant(first)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
    return [
      sql`(case when jsonb_typeof(${first}) in ('number', 'boolean') then ${first} end)`,
      sql`(case when jsonb_typeof(${first}) = 'string' then coalesce(${utc}, ${first} #>> '{}') end) collate "C"`,
    ];
  },
  collated: (column) => sql`${column} collate "C"`,
  holds: (text, needle) => sql`strpos(lower(${text}), lower(${needle}::text)) > 0`,
  keysOf: (docs) => sql`select distinct jsonb_object_keys(s.doc) as k from (${docs}) as s`,
  items: (row, field) => sql`jsonb_path_query(${sql.ref(`${row}.doc`)} -> ${field}::text, 'lax $[*]') as jt(v)`,
  itemText: sql`(jt.v #>> '{}')`,
  pairsJson: (pairs) =>
    sql`(select coalesce(json_agg(json_build_array(p.k, p.at)), '[]'::json)::text from (${pairs}) as p)`,
};
