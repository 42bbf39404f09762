import { addOp, type Paths, schemaName } from '../sim/sim-openapi-parts.js';
import { COLLECTIONS, type CollectionSlug } from '../vocabulary/collections.js';
import type { JsonObject } from '../vocabulary/ids.js';
import { AUTH_ERRORS, json, needs, param, problem, problems, ref } from './openapi-parts.js';
import { PARTNERS } from './openapi-write-paths.js';

/** The reads at the upstream's own paths, answered from the mirror: the list envelope and the records. */

const FRESHNESS: JsonObject = {
  ETag: { description: 'Changes when any served record changes (If-None-Match gives 304)', schema: { type: 'string' } },
  'Last-Modified': { description: 'The newest `updatedAt` served', schema: { type: 'string' } },
  'X-Understudy-Synced-At': {
    description: 'The last time the collection was passed or probed without a failure',
    schema: { type: 'string' },
  },
};

/** A bad parameter or a missing record: the upstream's error (as the simulator gives it) or a problem. */
const UPSTREAM_ERROR: JsonObject = { 'application/json': { schema: ref('Errors') } };

const readAnswers = (schema: JsonObject, description: string): JsonObject => ({
  '200': { ...json(schema, description), headers: FRESHNESS },
  '304': { description: 'Not modified (If-None-Match)' },
  '400': problem(400, UPSTREAM_ERROR),
  '404': problem(404, UPSTREAM_ERROR),
  ...problems(...AUTH_ERRORS),
});

const LIST_QUERY = ['where', 'sort', 'limit', 'page', 'pagination', 'depth', 'draft', 'locale', 'fallbackLocale'];
const GET_QUERY = ['depth', 'draft', 'locale', 'fallbackLocale'];

function addCollectionReads(paths: Paths, c: CollectionSlug): void {
  // At depth 0 a record has its stored shape; `depth` 1 and 2 (the default) populate relationships and joins, and
  // `select` leaves fields out, so those answers are objects of another shape.
  const record = {
    anyOf: [
      ref(`${schemaName(c)}Record`),
      { type: 'object', description: 'Relationships and joins populated (depth 1 or 2), or fields selected (select)' },
    ],
  };
  const list = { type: 'object', properties: { docs: { type: 'array', items: record } } };
  addOp(paths, `${PARTNERS}/${c}`, 'get', {
    operationId: `list-${c}`,
    tags: ['reads'],
    summary: `List ${c} from the mirror, as the upstream pages them`,
    security: needs('read'),
    parameters: [param('tenant'), ...LIST_QUERY.map(param)],
    responses: readAnswers({ allOf: [ref('ListEnvelope'), list] }, 'One page of records'),
  });
  addOp(paths, `${PARTNERS}/${c}/{id}`, 'get', {
    operationId: `get-${c}`,
    tags: ['reads'],
    summary: `One ${c} record from the mirror${c === 'media' ? ' (by filename)' : ''}`,
    security: needs('read'),
    parameters: [param('tenant'), param('id'), ...GET_QUERY.map(param)],
    responses: readAnswers(record, 'The record'),
  });
}

/** Adds the read routes of every collection to `paths`. */
export function addReadPaths(paths: Paths): void {
  for (const c of COLLECTIONS) addCollectionReads(paths, c);
}
