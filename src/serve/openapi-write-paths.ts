import { addOp, type Paths, schemaName } from '../sim/sim-openapi-parts.js';
import { API_VERSION, BULK_ROUTES, type CollectionSlug, DOCUMENTED_ROUTES } from '../vocabulary/collections.js';
import type { JsonObject } from '../vocabulary/ids.js';
import { CREATE_BODIES, UPDATE_BODIES } from '../writes/write-bodies.js';
import {
  type CreateCollection,
  draftAllowed,
  type UpdateCollection,
  WRITABLE,
  type WriteOp,
} from '../writes/write-job.js';
import { BulkBodySchema } from '../writes/write-job-schema.js';
import { AUTH_ERRORS, json, needs, param, problems, ref, schemaOf } from './openapi-parts.js';

/** The write routes at the upstream's own paths: each route's body, its answers, and what it takes besides. */

export const PARTNERS = `/partners/${API_VERSION}/{tenant}`;

/** One write route: its op, collection, method, path and body (null: none). */
interface WriteRoute {
  readonly op: WriteOp;
  readonly c: CollectionSlug;
  readonly method: 'post' | 'put' | 'patch' | 'delete';
  readonly path: string;
  readonly body: JsonObject | null;
  /** What the upstream answers when the write is done (`Prefer: wait`). */
  readonly upstream: JsonObject;
}

const RECORD = (c: CollectionSlug) => ref(`${schemaName(c)}Record`);

const DELETED = (c: CollectionSlug): JsonObject => ({
  type: 'object',
  required: ['doc', 'message'],
  properties: { doc: RECORD(c), message: { type: 'string' } },
});

/** Every write route the writes accept, in the order of `WRITABLE`. */
export function writeRoutes(): WriteRoute[] {
  const base = (c: CollectionSlug) => `${PARTNERS}/${c}`;
  return [
    ...WRITABLE.create.map(
      (c): WriteRoute => ({
        op: 'create',
        c,
        method: 'post',
        path: base(c),
        body: schemaOf(CREATE_BODIES[c as CreateCollection]),
        upstream: RECORD(c),
      }),
    ),
    ...WRITABLE.update.map(
      (c): WriteRoute => ({
        op: 'update',
        c,
        method: DOCUMENTED_ROUTES[c].includes('put') ? 'put' : 'patch',
        path: `${base(c)}/{id}`,
        body: schemaOf(UPDATE_BODIES[c as UpdateCollection]),
        upstream: RECORD(c),
      }),
    ),
    ...WRITABLE.delete.map(
      (c): WriteRoute => ({
        op: 'delete',
        c,
        method: 'delete',
        path: `${base(c)}/{id}`,
        body: null,
        upstream: DELETED(c),
      }),
    ),
    ...BULK_ROUTES.map(
      ({ collection: c, kind }): WriteRoute => ({
        op: 'bulk',
        c,
        method: 'patch',
        path: `${base(c)}/${kind}`,
        body: schemaOf(BulkBodySchema),
        upstream: ref('BulkResponse'),
      }),
    ),
  ];
}

const QUEUED: JsonObject = {
  description: 'Queued: follow it at `links.self` (also the Location header)',
  headers: { Location: { required: true, description: '`/v1/writes/{id}`', schema: { type: 'string' } } },
  content: { 'application/json': { schema: ref('AcceptedWrite') } },
};

/** The answers of one write route: 202 queued; 200 (and 201 for a create) as the idempotency key or the wait has it. */
function writeAnswers(r: WriteRoute): JsonObject {
  const again = 'Its Idempotency-Key was seen before: the job it names, in its current state';
  const done = 'Under `Prefer: wait`, the write is done: what the upstream answered';
  return {
    ...(r.op === 'create'
      ? { '200': json(ref('AcceptedWrite'), again), '201': json(r.upstream, `${done} (the created record)`) }
      : { '200': json({ anyOf: [ref('AcceptedWrite'), r.upstream] }, `${again}; or: ${done}`) }),
    '202': QUEUED,
    ...problems(400, ...AUTH_ERRORS, 404, 405, 413, 422),
  };
}

const SUMMARY: Readonly<Record<WriteOp, string>> = {
  create: 'Create a record',
  update: 'Update a record (partial: omitted fields are left unchanged)',
  delete: 'Delete a record',
  bulk: 'Bulk set/unset',
};

/** Adds the write routes to `paths`. */
export function addWritePaths(paths: Paths): void {
  for (const r of writeRoutes()) {
    const byId = r.path.endsWith('{id}');
    addOp(paths, r.path, r.method, {
      operationId: `${r.method}-${r.c}${r.op === 'bulk' ? `-${r.path.slice(r.path.lastIndexOf('/') + 1)}` : ''}`,
      tags: ['writes'],
      summary: `${SUMMARY[r.op]} of ${r.c}: validated as enqueue validates it, then queued`,
      security: needs('write'),
      parameters: [
        param('tenant'),
        ...(byId ? [param('id')] : []),
        ...(draftAllowed(r.op, r.c) ? [param('draft')] : []),
        param('idempotencyKey'),
        param('prefer'),
      ],
      ...(r.body ? { requestBody: { required: true, content: { 'application/json': { schema: r.body } } } } : {}),
      responses: writeAnswers(r),
    });
  }
}
