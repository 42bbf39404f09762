import qs from 'qs';
import { isJsonObject, type JsonObject, type JsonValue } from '../vocabulary/ids.js';
import { SimHttpError } from './sim-query.js';
import { DEFAULT_LOCALE, LOCALES } from './sim-schema.js';

/** Every query parameter of the Partners API, typed, as Payload's parseParams produces them. */
export interface SimParams {
  readonly depth: number;
  /** 'en', 'fr' or 'all'. */
  readonly locale: string;
  /** null when fallback is switched off (`fallbackLocale=none|false|null`). */
  readonly fallbackLocale: string | null;
  readonly draft: boolean;
  readonly select: JsonObject | undefined;
  readonly populate: JsonObject | undefined;
  /** `false` switches joins off; an object carries per-join `limit`. */
  readonly joins: JsonObject | false | undefined;
  /** Page size after clamping; 0 means "all" (as `limit=0`, or `pagination=false` without `limit`, in Payload). */
  readonly limit: number;
  readonly page: number;
  readonly sort: string | undefined;
  readonly where: JsonObject | undefined;
  readonly pagination: boolean;
}

export const DEFAULT_DEPTH = 2;
export const MAX_DEPTH = 10;

const bool = (v: unknown): boolean | undefined => {
  if (v === undefined) return undefined;
  if (v === 'true' || v === '1' || v === '') return true;
  if (v === 'false' || v === '0') return false;
  return undefined;
};

const int = (name: string, v: unknown, min: number): number | undefined => {
  if (v === undefined || v === '') return undefined;
  if (typeof v !== 'string' || !/^-?\d+$/.test(v)) throw new SimHttpError(400, `${name} must be an integer`);
  const n = Number(v);
  if (n < min) throw new SimHttpError(400, `${name} must be ${min} or greater`);
  return n;
};

const obj = (name: string, v: unknown): JsonObject | undefined => {
  if (v === undefined) return undefined;
  if (!isJsonObject(v as JsonValue)) throw new SimHttpError(400, `${name} must be an object (${name}[field]=...)`);
  return v as JsonObject;
};

/**
 * A query string without brackets, escapes or repeated names (`depth=0&limit=10`, most reads) as qs would read it, without qs's
 * cost; null for any other (qs reads it).
 */
function flatParams(search: string): Record<string, string> | null {
  if (/[[%]/.test(search)) return null;
  const out: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(search)) {
    if (k === '' || Object.hasOwn(out, k) || k === '__proto__') return null;
    out[k] = v;
  }
  return out;
}

/** Parses a raw query string (without `?`) into typed params; throws a 400 `SimHttpError` naming the bad one. */
export function parseParams(search: string, opts: { maxLimit: number }): SimParams {
  const raw =
    flatParams(search) ??
    (qs.parse(search, { depth: 10, arrayLimit: 1000, parameterLimit: 5000 }) as Record<string, unknown>);
  const depth = Math.min(int('depth', raw.depth, 0) ?? DEFAULT_DEPTH, MAX_DEPTH);
  const localeRaw = typeof raw.locale === 'string' ? raw.locale : DEFAULT_LOCALE;
  // Payload ignores an unknown locale and uses the default one.
  const locale = localeRaw === 'all' || (LOCALES as readonly string[]).includes(localeRaw) ? localeRaw : DEFAULT_LOCALE;
  const fb = typeof raw.fallbackLocale === 'string' ? raw.fallbackLocale : DEFAULT_LOCALE;
  const fallbackLocale = fb === 'none' || fb === 'false' || fb === 'null' || fb === '' ? null : fb;
  const pagination = bool(raw.pagination) ?? true;
  // `pagination=false` without a limit means every record; with one, Payload still applies it (and `page`).
  let limit = int('limit', raw.limit, 0) ?? (pagination ? 10 : 0);
  // The clamp is the simulator's (Payload has no maximum): `maxLimit` 0 switches it off.
  if (opts.maxLimit > 0 && limit > opts.maxLimit) limit = opts.maxLimit;
  const page = int('page', raw.page, 1) ?? 1;
  const sort = typeof raw.sort === 'string' ? raw.sort : Array.isArray(raw.sort) ? raw.sort.join(',') : undefined;
  const joinsRaw = raw.joins;
  const joins = joinsRaw === 'false' || joinsRaw === false ? false : obj('joins', joinsRaw);
  return {
    depth,
    locale,
    fallbackLocale,
    draft: bool(raw.draft) ?? false,
    select: obj('select', raw.select),
    populate: obj('populate', raw.populate),
    joins,
    limit,
    page,
    sort: sort === '' ? undefined : sort,
    where: obj('where', raw.where),
    pagination,
  };
}
