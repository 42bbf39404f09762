import type { CollectionSlug } from '../vocabulary/collections.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../vocabulary/ids.js';
import { closestName } from './write-bodies.js';

/**
 * Bulk custom-attribute writes checked against the tenant's attribute definitions: the mirrored Custom Attribute
 * record (one per tenant, table `custom_attributes`), which holds one array per collection (`SeriesAttributes`,
 * `OrganizationsAttributes`, …) of `{ key, label, type, options: [{ value, label }] }`. The upstream refuses a key
 * its tenant does not define (`400: The following field is invalid: Regoin`) or a value outside the options; this
 * says so at enqueue, before anything is queued.
 */

/** The array of the Custom Attribute record that defines a bulk collection's attributes. */
const DEFINITIONS_OF: Partial<Record<CollectionSlug, string>> = {
  organizations: 'OrganizationsAttributes',
  series: 'SeriesAttributes',
};

/** One attribute definition. */
interface Definition {
  readonly key: string;
  /** `select`, `boolean`/`checkbox`, `text`/`textarea`, `number`, or what the upstream says. */
  readonly type: string;
  readonly hasMany: boolean;
  /** Allowed values, when the definition lists options. */
  readonly options: readonly JsonValue[] | null;
}

const definitionsIn = (record: JsonObject, array: string): Definition[] => {
  const list = record[array];
  return (Array.isArray(list) ? list : []).flatMap((d) => {
    if (!isJsonObject(d)) return [];
    // The key writes use: `key`, or `publicKey` where an upstream names it so (attributeWhere filters by it).
    const key = typeof d.key === 'string' ? d.key : typeof d.publicKey === 'string' ? d.publicKey : null;
    if (key === null) return [];
    const options = Array.isArray(d.options)
      ? d.options.map((o) => (isJsonObject(o) ? ((o.value ?? null) as JsonValue) : o))
      : [];
    return [
      {
        key,
        type: typeof d.type === 'string' ? d.type : 'unknown',
        hasMany: d.hasMany === true,
        options: options.length > 0 ? options : null,
      },
    ];
  });
};

const show = (v: JsonValue): string => (typeof v === 'string' ? `"${v}"` : String(v));

const valueProblem = (d: Definition, v: JsonValue): string | null => {
  if (d.options) {
    const options = d.options;
    if (!d.hasMany && Array.isArray(v)) return `custom attribute ${d.key} takes one value, not a list`;
    for (const one of d.hasMany && Array.isArray(v) ? v : [v]) {
      if (options.some((o) => o === one)) continue;
      const near =
        typeof one === 'string'
          ? closestName(
              one,
              options.filter((o) => typeof o === 'string'),
            )
          : null;
      return (
        `${show(one)} is not an allowed value of custom attribute ${d.key} (allowed: ${options.map(show).join(', ')})` +
        (near === null ? '' : `: did you mean "${near}"?`)
      );
    }
    return null;
  }
  const clear = ' (to clear it, unset it)';
  switch (d.type) {
    case 'boolean':
    case 'checkbox':
      return typeof v === 'boolean' ? null : `custom attribute ${d.key} takes true or false, not ${show(v)}${clear}`;
    case 'number':
      return typeof v === 'number' || typeof v === 'bigint'
        ? null
        : `custom attribute ${d.key} takes a number, not ${show(v)}${clear}`;
    case 'text':
    case 'textarea':
      return typeof v === 'string' ? null : `custom attribute ${d.key} takes a string, not ${show(v)}${clear}`;
    default:
      return null;
  }
};

/**
 * Checks the keys and values of a bulk custom-attribute write of `collection` against the tenant's mirrored Custom
 * Attribute record; returns the first problem as one line naming its path in the body (`set.regoin`, `unset[0]`),
 * with the key or value meant when one is close, or null when the definitions allow it all.
 */
export function checkCustomAttributes(
  record: JsonObject,
  collection: CollectionSlug,
  tenant: string,
  set: { readonly [key: string]: JsonValue } | undefined,
  unset: readonly string[] | undefined,
): string | null {
  const array = DEFINITIONS_OF[collection];
  if (!array) return null;
  const defs = definitionsIn(record, array);
  const byKey = new Map(defs.map((d) => [d.key, d]));
  const keys = defs.map((d) => d.key);
  const unknown = (key: string, path: string) => {
    const near = closestName(key, keys);
    const defined = keys.length > 0 ? `defined: ${keys.join(', ')}` : `${array} of the mirrored record is empty`;
    return (
      `bulk body: ${path}: custom attribute "${key}" is not defined for ${collection} on tenant ${tenant}` +
      `${near === null ? '' : `: did you mean "${near}"?`} (${defined})`
    );
  };
  for (const [key, value] of Object.entries(set ?? {})) {
    const d = byKey.get(key);
    if (!d) return unknown(key, `set.${key}`);
    const problem = valueProblem(d, value);
    if (problem) return `bulk body: set.${key}: ${problem}`;
  }
  for (const [i, key] of (unset ?? []).entries()) {
    if (!byKey.has(key)) return unknown(key, `unset[${i}]`);
  }
  return null;
}
