declare const brand: unique symbol;
export type Brand<T, B extends string> = T & { readonly [brand]: B };

export type TenantSlug = Brand<string, 'TenantSlug'>;
/** A record id as a string; upstreams may send numbers, which are normalised with `recordId`. */
export type RecordId = Brand<string, 'RecordId'>;

/** What a tenant slug looks like: lower-case letters, digits and `-`, not starting with `-`. */
export const TENANT_SLUG = /^[a-z0-9][a-z0-9-]*$/;
export const isTenantSlug = (s: unknown): s is string => typeof s === 'string' && TENANT_SLUG.test(s);
export const tenantSlug = (s: string): TenantSlug => s as TenantSlug;
export const recordId = (v: string | number | bigint): RecordId => String(v) as RecordId;

/**
 * What a record id a write addresses may look like: not empty, not `.` or `..`, no `/` or `\`, no control
 * characters and no whitespace at either end. Dot segments survive `encodeURIComponent` and are normalised away
 * (`/event-instances/..` is the tenant root), and an id with a stray `\r` or space reaches the upstream as a 404.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
export const RECORD_ID = /^(?!\.\.?$)(?!\s)(?!.*\s$)[^/\\\u0000-\u001f\u007f-\u009f]+$/;

/** Why an id cannot address a record, in words; null when it can. */
export function recordIdProblem(id: string): string | null {
  if (id === '') return 'is empty';
  if (id === '.' || id === '..') return 'is a dot segment (it would address the collection or the tenant root)';
  if (/[/\\]/.test(id)) return 'holds / or \\ (it would address another route)';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  if (/[\u0000-\u001f\u007f-\u009f]/.test(id))
    return 'holds a control character (a stray \\r or \\t from a pasted line?)';
  if (/^\s|\s$/.test(id)) return 'has whitespace at its start or end';
  return RECORD_ID.test(id) ? null : 'is not a record id';
}

/** `bigint`: an integer beyond 2^53 read exactly (see `parseExactJson`). */
export type JsonPrimitive = string | number | bigint | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** A record as the upstream sent it. `id` may be a string or a number, and media may have none. */
export type UpstreamDoc = JsonObject;

export const isJsonObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
