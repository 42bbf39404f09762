import { addOp, type Paths } from '../sim/sim-openapi-parts.js';
import { COLLECTIONS } from '../vocabulary/collections.js';
import type { JsonObject } from '../vocabulary/ids.js';
import { AUTH_ERRORS, json, needs, param, problems, ref, type Scope } from './openapi-parts.js';

/** serve's own routes under `/v1`: following writes, the change feed, and this description. */

const query = (name: string, schema: JsonObject, description: string): JsonObject => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
});

/** One route of `/v1`: its path and method, then its operation's id, summary, scope (null: no token), parameters and answers. */
type V1Route = readonly [string, string, string, string, Scope | null, readonly JsonObject[], JsonObject];

const WAIT = query(
  'wait',
  { type: 'string', examples: ['30s'] },
  'Long-poll until the write is final, at most this long (a duration such as `30s`; at most 60 s)',
);

const WRITES: readonly V1Route[] = [
  [
    '/v1/writes/{id}',
    'get',
    'get-write',
    'A write and where it stands, as `writes show --json` gives it, with the name of the token behind it',
    'write',
    [param('writeId'), WAIT],
    { '200': json(ref('WriteDetails'), 'The write'), ...problems(400, ...AUTH_ERRORS, 404) },
  ],
  [
    '/v1/writes',
    'get',
    'list-failed-writes',
    'Writes that failed (and bulk writes that partly did), newest first, with their reasons (`writes failed`)',
    'write',
    [
      query('state', { type: 'string', enum: ['failed'] }, 'Which writes: `failed` (the only listing)'),
      query('tenant', { type: 'string' }, "One tenant's (default: every tenant the token holds)"),
    ],
    {
      '200': json({ type: 'array', items: ref('FailedWrite') }, 'The failed writes'),
      ...problems(400, ...AUTH_ERRORS),
    },
  ],
  [
    '/v1/writes/{id}/retry',
    'post',
    'retry-write',
    'Retries a failed write under the rules of `writes retry`',
    'write',
    [param('writeId')],
    { '200': json(ref('RetryResult'), 'What was queued'), ...problems(400, ...AUTH_ERRORS, 404, 422) },
  ],
];

const FILTERS = [
  query('tenant', { type: 'string' }, "Only this tenant's changes (default: every tenant the token holds)"),
  query('collection', { type: 'string', examples: [COLLECTIONS[0]] }, 'Only this collection (its API path)'),
  query('kind', { type: 'string', examples: ['insert', 'update', 'revive', 'delete'] }, 'Only changes of this kind'),
  query('reason', { type: 'string', examples: ['deleted', 'unpublished'] }, 'Only deletes with this reason'),
];
const SINCE = query('since', { type: 'integer', minimum: 0 }, 'Only changes after this seq (default 0)');

const EVENT_STREAM: JsonObject = {
  description:
    'Server-Sent Events, one per change: `id` is its seq, `data` the change as JSON (a `Change`); a comment ' +
    'line (`:`) every 15 s keeps the connection open',
  content: { 'text/event-stream': { schema: { type: 'string' } } },
};

const CHANGES: readonly V1Route[] = [
  [
    '/v1/changes',
    'get',
    'list-changes',
    'Changes of the mirror after `since`, in seq order, as `changes --json` prints them',
    'changes',
    [SINCE, ...FILTERS, query('limit', { type: 'integer', minimum: 1 }, 'At most this many')],
    { '200': json({ type: 'array', items: ref('Change') }, 'The changes'), ...problems(400, ...AUTH_ERRORS, 410) },
  ],
  [
    '/v1/changes/stream',
    'get',
    'stream-changes',
    'The change feed as it grows, resumed after Last-Event-ID',
    'changes',
    [param('lastEventId'), SINCE, ...FILTERS],
    { '200': EVENT_STREAM, ...problems(400, ...AUTH_ERRORS, 410) },
  ],
];

const HTML_PAGE: JsonObject = { description: 'HTML page', content: { 'text/html': { schema: { type: 'string' } } } };

const DESCRIPTION: readonly V1Route[] = [
  [
    '/v1/openapi.json',
    'get',
    'openapi',
    'This description (OpenAPI 3.1)',
    null,
    [],
    { '200': json({ type: 'object' }, 'The OpenAPI document') },
  ],
  ['/v1/docs', 'get', 'docs', 'This description, rendered (Swagger UI)', null, [], { '200': HTML_PAGE }],
];

/** Adds the `/v1` routes to `paths`. */
export function addV1Paths(paths: Paths): void {
  const tagged: [string, readonly V1Route[]][] = [
    ['writes', WRITES],
    ['changes', CHANGES],
    ['description', DESCRIPTION],
  ];
  for (const [tag, routes] of tagged)
    for (const [path, method, operationId, summary, scope, parameters, responses] of routes)
      addOp(paths, path, method, {
        operationId,
        tags: [tag],
        summary,
        security: scope === null ? [] : needs(scope),
        ...(parameters.length > 0 ? { parameters: [...parameters] } : {}),
        responses,
      });
}
