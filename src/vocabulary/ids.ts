declare const brand: unique symbol;
export type Brand<T, B extends string> = T & { readonly [brand]: B };

export type TenantSlug = Brand<string, 'TenantSlug'>;
/** A record id as a string; upstreams may send numbers, which are normalised with `recordId`. */
export type RecordId = Brand<string, 'RecordId'>;

/** What a tenant slug looks like: lower-case letters, digits and `-`, not starting with `-`. */
export const TENANT_SLUG = /^[a-z0-9][a-z0-9-]*$/;
export const isTenantSlug = (s: unknown): s is string => typeof s === 'string' && TENANT_SLUG.test(s);
export const tenantSlug = (s: string): TenantSlug => s as TenantSlug;
export const recordId = (v: string | number): RecordId => String(v) as RecordId;

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** A record as the upstream sent it. `id` may be a string or a number, and media may have none. */
export type UpstreamDoc = JsonObject;

export const isJsonObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
