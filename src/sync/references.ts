import type { CollectionSlug } from '../vocabulary/collections.js';
import { isJsonObject, type JsonValue, type UpstreamDoc } from '../vocabulary/ids.js';

/** One relationship: records of `from` point at records of `to` through the field at `path`. */
export interface RefEdge {
  readonly from: CollectionSlug;
  readonly path: readonly string[];
  readonly to: CollectionSlug;
  /** A joined field (`{ docs: [...] }`) rather than a stored relationship. */
  readonly joined?: boolean;
}

/** The relationships of the spec's resources (and the simulator's Event shape) that lead to other collections. */
export const REF_EDGES: readonly RefEdge[] = [
  { from: 'event-instances', path: ['event'], to: 'events' },
  { from: 'event-instances', path: ['venue'], to: 'venues' },
  { from: 'event-instances', path: ['series'], to: 'series' },
  { from: 'events', path: ['season'], to: 'seasons' },
  { from: 'events', path: ['series'], to: 'series' },
  { from: 'events', path: ['venue'], to: 'venues' },
  { from: 'events', path: ['organization'], to: 'organizations' },
  { from: 'events', path: ['event-instances'], to: 'event-instances', joined: true },
  { from: 'series', path: ['event-instances'], to: 'event-instances', joined: true },
  { from: 'series', path: ['events'], to: 'events', joined: true },
  { from: 'seasons', path: ['events'], to: 'events', joined: true },
  { from: 'blogs', path: ['posts'], to: 'posts', joined: true },
  { from: 'posts', path: ['blog'], to: 'blogs' },
  { from: 'pages', path: ['parent'], to: 'pages' },
  { from: 'redirects', path: ['to', 'reference'], to: 'pages' },
  { from: 'forms', path: ['redirect', 'reference'], to: 'pages' },
];

const at = (doc: UpstreamDoc, path: readonly string[]): JsonValue | undefined => {
  let cur: JsonValue | undefined = doc;
  for (const key of path) {
    if (!isJsonObject(cur)) return undefined;
    cur = cur[key];
  }
  return cur;
};

/** A Payload polymorphic reference is `{ relationTo, value }`; a populated one is the record itself. */
const unwrap = (v: JsonValue): JsonValue =>
  isJsonObject(v) && 'relationTo' in v && 'value' in v ? (v.value ?? null) : v;

/**
 * The values at an edge's field, flattened: ids (string or number) or populated records. Joined fields hold
 * `{ docs: [...] }`; relationships hold one value or an array.
 */
export function refValues(doc: UpstreamDoc, edge: RefEdge): JsonValue[] {
  let v = at(doc, edge.path);
  if (v === undefined || v === null) return [];
  if (edge.joined && isJsonObject(v)) v = v.docs ?? [];
  const list = Array.isArray(v) ? v : [v];
  return list.map(unwrap).filter((x) => x !== null && x !== undefined);
}

/** The id of a reference value: the value itself, or a populated record's `id`. */
export const refId = (v: JsonValue): string | null => {
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (isJsonObject(v) && (typeof v.id === 'string' || typeof v.id === 'number')) return String(v.id);
  return null;
};

/** Populated records found at an edge (values that are objects with an id). */
export const populatedDocs = (doc: UpstreamDoc, edge: RefEdge): UpstreamDoc[] =>
  refValues(doc, edge).filter((v): v is UpstreamDoc => isJsonObject(v) && refId(v) !== null);

export const edgesTo = (to: CollectionSlug): RefEdge[] => REF_EDGES.filter((e) => e.to === to);
