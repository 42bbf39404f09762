import type { Variant } from '../../sync/store-port.js';
import type { CollectionSlug } from '../../vocabulary/collections.js';
import { isJsonObject, type JsonValue } from '../../vocabulary/ids.js';
import { WHERE_OPERATORS, type WhereOperator } from '../../vocabulary/where-operators.js';

/** The operators of the upstream's `where` (the one list, in vocabulary). */
export const FILTER_OPS = WHERE_OPERATORS;
export type FilterOp = WhereOperator;

/**
 * A `where`, checked and normalised by the caller: `and`/`or` of parts, or one operator on a dot path of the
 * record. A condition holds when some value at its path (arrays on the way fan out) passes the operator, as the
 * upstream reads it; `not_*` hold when none does.
 */
export type Filter =
  | { readonly kind: 'and' | 'or'; readonly parts: readonly Filter[] }
  | { readonly kind: 'cond'; readonly path: readonly string[]; readonly op: FilterOp; readonly operand: JsonValue }
  /**
   * A condition through relationship `field` (`event.title`): some related record it names, as the read sees it in
   * `view` (null: the mirror holds no copy of it, so none matches), passes `inner`.
   */
  | { readonly kind: 'rel'; readonly field: string; readonly view: ReadView | null; readonly inner: Filter };

export interface SortKey {
  readonly path: readonly string[];
  readonly desc: boolean;
}

/** How a copy's localized top-level fields are read: resolved to `locale` (with `fallback`) from per-locale objects. */
export interface LocaleRead {
  readonly locale: string;
  readonly fallback: string | null;
  /** The top-level fields stored per locale (`{ en, fr }`). */
  readonly fields: ReadonlySet<string>;
}

/**
 * One copy of a collection as a read sees it: the published rows (the collection's table) or another variant
 * (`doc_variants`), and, for a copy holding every locale, how its localized fields resolve.
 */
export interface ReadView {
  readonly tenant: string;
  readonly collection: CollectionSlug;
  readonly variant: Variant;
  readonly locale: LocaleRead | null;
  /** Top-level fields the upstream computes from other records (joins): never stored values to filter or sort on. */
  readonly computed: ReadonlySet<string>;
}

/** A list read: the matching live rows of a view, in order, one window of them, and how many match in all. */
export interface ListSpec {
  readonly view: ReadView;
  readonly filter: Filter | null;
  /** Ties are broken by the record's key ascending after these. */
  readonly sort: readonly SortKey[];
  /** Rows to skip, then rows to give (null: all of them). */
  readonly offset: number;
  readonly limit: number | null;
  /** Whether to count every match (the envelope's `totalDocs`). */
  readonly count: boolean;
  /** Also tell the copies of the collection as this statement sees them (`ListResult.copies`). */
  readonly withCopies?: boolean;
}

/** A row as stored: the record's key and its JSON text. */
export interface DocRow {
  readonly id: string;
  readonly doc: string;
}

export interface ListResult {
  readonly rows: readonly DocRow[];
  /** Every match, when counted and at least one row came back; else null. */
  readonly total: number | null;
  /** The copies of the view's collection as the statement saw them (`withCopies`), or null when it cannot tell. */
  readonly copies: CollectionCopies | null;
}

/** What the mirror holds of one tenant's collection: each copy's last success, and the last good watch probe. */
export interface CollectionCopies {
  /** Each variant with a sync state, and when its last pass succeeded (null: never). */
  readonly variants: ReadonlyMap<Variant, string | null>;
  /** When a watch probe of the collection last succeeded; null when none did. */
  readonly probedAt: string | null;
}

/** `in`'s list: an array, an object's values (as qs may give), or a comma list. */
export const listOperand = (v: JsonValue): JsonValue[] => {
  if (Array.isArray(v)) return v;
  if (isJsonObject(v)) return Object.values(v);
  if (typeof v === 'string') return v.split(',').map((s) => s.trim());
  return [v];
};
