import { isJsonObject, type JsonObject, type JsonValue } from '../vocabulary/ids.js';

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
      return typeof v === 'number' || v === null ? null : `theme setting ${field.key} must be a number`;
    default:
      return null;
  }
};

/**
 * Checks the keys and values of a theme-settings bulk write against a mirrored schema; returns the first problem
 * as one line, or null when the schema allows it all.
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
  for (const key of [...Object.keys(set ?? {}), ...(unset ?? [])]) {
    if (!byKey.has(key))
      return `theme setting "${key}" is not in the ${collection} theme-settings schema (keys: ${keys})`;
  }
  for (const [key, value] of Object.entries(set ?? {})) {
    const field = byKey.get(key);
    const problem = field ? checkValue(field, value) : null;
    if (problem) return problem;
  }
  return null;
}
