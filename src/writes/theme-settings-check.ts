import { isJsonObject, type JsonObject, type JsonValue } from '../vocabulary/ids.js';
import { closestName } from './write-bodies.js';

/** One field of a theme-settings schema, as the spec's schema endpoint describes it. */
interface SchemaField {
  readonly key: string;
  readonly type: string;
  readonly hasMany: boolean;
  /** Allowed values, when the schema lists options (`value` may be null). */
  readonly options: readonly JsonValue[] | null;
}

const fieldsOf = (schema: JsonObject): SchemaField[] => {
  const raw = Array.isArray(schema.fields) ? schema.fields : [];
  return raw.flatMap((f) => {
    if (!isJsonObject(f) || typeof f.key !== 'string') return [];
    const options = Array.isArray(f.options)
      ? f.options.flatMap((o) => (isJsonObject(o) && 'value' in o ? [o.value as JsonValue] : []))
      : [];
    return [
      {
        key: f.key,
        type: typeof f.type === 'string' ? f.type : 'unknown',
        hasMany: f.hasMany === true,
        options: options.length > 0 ? options : null,
      },
    ];
  });
};

const show = (v: JsonValue): string => (typeof v === 'string' ? `"${v}"` : JSON.stringify(v));

const checkValue = (field: SchemaField, v: JsonValue): string | null => {
  if (field.options) {
    const values = field.hasMany ? (Array.isArray(v) ? v : [v]) : [v];
    if (!field.hasMany && Array.isArray(v)) return `theme setting ${field.key} takes one value, not a list`;
    for (const one of values) {
      if (!field.options.some((o) => o === one)) {
        return `theme setting ${field.key}: ${show(one)} is not an allowed option (${field.options.map(show).join(', ')})`;
      }
    }
    return null;
  }
  switch (field.type) {
    case 'checkbox':
      return typeof v === 'boolean' || v === null ? null : `theme setting ${field.key} must be true or false`;
    case 'text':
    case 'textarea':
      return typeof v === 'string' || v === null ? null : `theme setting ${field.key} must be a string`;
    case 'number':
      return typeof v === 'number' || typeof v === 'bigint' || v === null
        ? null
        : `theme setting ${field.key} must be a number`;
    default:
      return null;
  }
};

/**
 * Checks the keys and values of a theme-settings bulk write against a mirrored schema; returns the first problem
 * as one line naming its path in the body (`set.heroStyel`, `unset[0]`) and the key meant when one is close, or null
 * when the schema allows it all.
 */
export function checkThemeSettings(
  schema: JsonObject,
  collection: string,
  set: { readonly [key: string]: JsonValue } | undefined,
  unset: readonly string[] | undefined,
): string | null {
  if (schema.configurationAvailable === false) {
    const reason = typeof schema.reason === 'string' && schema.reason ? `: ${schema.reason}` : '';
    return `theme settings of ${collection} are not configurable for this tenant${reason}`;
  }
  const fields = fieldsOf(schema);
  const byKey = new Map(fields.map((f) => [f.key, f]));
  const keys = fields.map((f) => f.key).join(', ');
  const paths: [string, string][] = [
    ...Object.keys(set ?? {}).map((k): [string, string] => [k, `set.${k}`]),
    ...(unset ?? []).map((k, i): [string, string] => [k, `unset[${i}]`]),
  ];
  for (const [key, path] of paths) {
    if (byKey.has(key)) continue;
    const near = closestName(
      key,
      fields.map((f) => f.key),
    );
    return (
      `bulk body: ${path}: theme setting "${key}" is not in the ${collection} theme-settings schema` +
      `${near === null ? '' : `: did you mean "${near}"?`} (keys: ${keys})`
    );
  }
  for (const [key, value] of Object.entries(set ?? {})) {
    const field = byKey.get(key);
    const problem = field ? checkValue(field, value) : null;
    if (problem) return `bulk body: set.${key}: ${problem}`;
  }
  return null;
}
