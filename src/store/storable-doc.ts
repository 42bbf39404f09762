import { stringifyJson } from '../vocabulary/exact-json.js';
import type { JsonValue, UpstreamDoc } from '../vocabulary/ids.js';

/**
 * A JSON escape no engine can store as it is: NUL (PostgreSQL's `text` and `jsonb` refuse it) or a UTF-16 surrogate
 * (`jsonb` refuses a lone one, and UTF-8 cannot hold it), as an escape: after an even run of backslashes. A pair
 * of surrogates matches too, and then comes out as it was: the check below is a cheap filter, not the rule.
 */
const SUSPECT = /(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f])/i;

/** A lone high or low surrogate: not a character, so no engine keeps it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** A string as every engine stores it: each NUL and each lone surrogate becomes U+FFFD (the replacement character). */
const storableString = (s: string): string => s.replaceAll('\u0000', '\uFFFD').replace(LONE_SURROGATE, '\uFFFD');

function storableValue(v: JsonValue): JsonValue {
  if (typeof v === 'string') return storableString(v);
  if (Array.isArray(v)) return v.map(storableValue);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, JsonValue> = {};
    for (const [k, x] of Object.entries(v)) out[storableString(k)] = storableValue(x);
    return out;
  }
  return v;
}

/**
 * A record and its JSON text as the mirror stores them, the same on SQLite and PostgreSQL: exactly as received,
 * except that each NUL character and each lone surrogate, in a value or a key, is stored as U+FFFD. Without this,
 * one such record would fail its whole page on PostgreSQL, on every run, for good (docs/schema.md).
 */
export function storableDoc(doc: UpstreamDoc): { doc: UpstreamDoc; text: string } {
  const text = stringifyJson(doc);
  if (!SUSPECT.test(text)) return { doc, text };
  const clean = storableValue(doc) as UpstreamDoc;
  return { doc: clean, text: stringifyJson(clean) };
}
