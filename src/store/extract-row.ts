import { isJsonObject, type JsonValue, recordId, type UpstreamDoc } from '../vocabulary/ids.js';
import type { TypedColumn } from './columns.js';
import { localWallTime } from './local-time.js';

/** A value SQLite binds as is. */
export type SqlValue = string | number | null;

/** The key a record is stored under (its id, or a media record's filename): shared with sync, which compares keys. */
export { docKey } from '../vocabulary/record-key.js';

/**
 * An ISO 8601 instant normalised to UTC with milliseconds, so instants sent at different offsets compare as
 * strings; null when absent, the input unchanged when it does not parse.
 */
export function normaliseInstant(v: JsonValue | undefined): string | null {
  if (typeof v !== 'string' || v === '') return null;
  if (CANONICAL.test(v)) return v;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? v : new Date(ms).toISOString();
}

/**
 * An instant already as `toISOString` writes it, on a day every month has: it normalises to itself, so the parse
 * and the formatting (a microsecond or two each, three times a record) are skipped for what upstreams usually send.
 */
const CANONICAL = /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;

/** `updated_at` of a row: the normalised instant, or null when `updatedAt` is absent, null or not a date. */
export function rowUpdatedAt(v: JsonValue | undefined): string | null {
  if (typeof v === 'string' && CANONICAL.test(v)) return v;
  const n = normaliseInstant(v);
  return n !== null && !Number.isNaN(Date.parse(n)) ? n : null;
}

const at = (doc: UpstreamDoc, path: string): JsonValue | undefined => {
  if (!path.includes('.')) return doc[path];
  let cur: JsonValue | undefined = doc;
  for (const part of path.split('.')) {
    if (!isJsonObject(cur)) return undefined;
    cur = cur[part];
  }
  return cur;
};

const refId = (v: JsonValue | undefined): SqlValue => {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint') return recordId(v);
  if (isJsonObject(v)) {
    const id = v.id;
    if (typeof id === 'string') return id;
    if (typeof id === 'number' || typeof id === 'bigint') return recordId(id);
    // Payload's polymorphic relation shape: { relationTo, value }.
    if ('value' in v) return refId(v.value);
  }
  return null;
};

/** The value of one typed column for a record, or null when the record lacks it or it has another type. */
export function extractColumn(doc: UpstreamDoc, col: TypedColumn): SqlValue {
  const v = at(doc, col.path);
  switch (col.kind) {
    case 'text':
      if (typeof v === 'string') return v;
      if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
      return null;
    case 'ref':
      return refId(v);
    case 'datetime':
      return normaliseInstant(v);
    case 'integer':
      if (typeof v === 'bigint') return String(v);
      return typeof v === 'number' && Number.isFinite(v) ? Math.trunc(v) : null;
    case 'real':
      return typeof v === 'number' && Number.isFinite(v) ? v : null;
    case 'local': {
      const zone = col.zone?.map((p) => at(doc, p)).find((z) => typeof z === 'string' && z !== '');
      return typeof v === 'string' && typeof zone === 'string' ? localWallTime(v, zone) : null;
    }
  }
}
