import type { CollectionSlug } from '../vocabulary/collections.js';
import type { JsonObject, JsonValue } from '../vocabulary/ids.js';
import type { SimParams } from './parse-params.js';
import { type TenantData, visibleView } from './sim-db.js';
import { isSimHttpError, SimHttpError } from './sim-query.js';
import { matchingRecords } from './sim-read.js';
import { shapeDoc } from './sim-shape.js';
import { deleteDoc, updateDoc } from './sim-writes.js';

/** Payload's default labels (from the slug) for its bulk messages. */
const LABELS: Record<CollectionSlug, readonly [string, string]> = {
  pages: ['Page', 'Pages'],
  posts: ['Post', 'Posts'],
  blogs: ['Blog', 'Blogs'],
  seasons: ['Season', 'Seasons'],
  series: ['Series', 'Series'],
  events: ['Event', 'Events'],
  'event-instances': ['Event Instance', 'Event Instances'],
  venues: ['Venue', 'Venues'],
  organizations: ['Organization', 'Organizations'],
  media: ['Media', 'Media'],
  forms: ['Form', 'Forms'],
  redirects: ['Redirect', 'Redirects'],
  'custom-attributes': ['Custom Attribute', 'Custom Attributes'],
};
const label = (c: CollectionSlug, n: number): string => LABELS[c][n === 1 ? 0 : 1];

export interface BulkWhereDeps {
  readonly now: () => number;
  /** Origin of the simulator, for media URLs in the answer's docs. */
  readonly origin: string;
}

/**
 * One record's failure as Payload's update and delete operations collect it: `{id, isPublic, message}`. An
 * `APIError` (a 4xx: a ValidationError, Not Found) is public and keeps its message; anything else is not, and the
 * REST handler replaces its message with `Something went wrong.`.
 */
const failure = (id: string, err: unknown): JsonObject =>
  isSimHttpError(err) && err.status < 500
    ? { id, isPublic: true, message: err.message }
    : { id, isPublic: false, message: 'Something went wrong.' };

/**
 * Payload's collection-level PATCH / DELETE: every record matching `where` (required), each updated or deleted on
 * its own; `{docs, errors: [{id, isPublic, message}], message}` with 200 when all succeeded, 400 otherwise (the
 * others still change).
 */
export function bulkByWhere(
  deps: BulkWhereDeps,
  tenant: TenantData,
  c: CollectionSlug,
  op: 'update' | 'delete',
  p: SimParams,
  body: unknown,
): { status: number; body: JsonValue } {
  if (!p.where || Object.keys(p.where).length === 0)
    throw new SimHttpError(400, `Missing 'where' query of documents to ${op}.`);
  const targets = [...matchingRecords(c, tenant, { ...p, limit: 0 })];
  const docs: JsonObject[] = [];
  const errors: JsonObject[] = [];
  for (const rec of targets) {
    try {
      if (op === 'update') {
        const r = updateDoc(deps, tenant, c, rec.id, body, p, 'patch');
        docs.push(shapeDoc(c, r.stored, { tenant, params: { ...p, draft: r.draft }, origin: deps.origin }, p.depth));
      } else {
        const view = visibleView(c, rec, p.draft) ?? rec.main;
        docs.push(shapeDoc(c, view, { tenant, params: p, origin: deps.origin }, p.depth));
        deleteDoc(tenant, c, rec.id);
      }
    } catch (err) {
      errors.push(failure(rec.id, err));
    }
  }
  const verb = op === 'update' ? 'Updated' : 'Deleted';
  if (errors.length === 0)
    return {
      status: 200,
      body: { docs, errors, message: `${verb} ${docs.length} ${label(c, docs.length)} successfully.` },
    };
  const total = docs.length + errors.length;
  return {
    status: 400,
    body: { docs, errors, message: `Unable to ${op} ${errors.length} out of ${total} ${label(c, total)}.` },
  };
}
