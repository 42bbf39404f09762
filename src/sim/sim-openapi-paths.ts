import { BULK_ROUTES, type CollectionSlug, type RouteOp, THEME_SCHEMA_COLLECTIONS } from '../vocabulary/collections.js';
import type { JsonObject } from '../vocabulary/ids.js';
import {
  addOp,
  BASE,
  ERRORS,
  json,
  jsonBody,
  LIST_PARAMS,
  type Paths,
  pref,
  READ_PARAMS,
  ref,
  SCOPE,
  schemaName,
} from './sim-openapi-parts.js';

/** The operations of the document, one builder per route group. */

const OBJECT_BODY = jsonBody({ type: 'object' });

/** One route of a collection: where it lives, its method and its operation. */
interface CollectionOp {
  readonly path: string;
  readonly method: string;
  readonly op: JsonObject;
}

/** Names and parameters one collection's operations share. */
interface CollectionNames {
  readonly c: CollectionSlug;
  readonly name: string;
  readonly idParam: JsonObject;
  readonly listPath: string;
  readonly itemPath: string;
}

const namesOf = (c: CollectionSlug): CollectionNames => ({
  c,
  name: schemaName(c),
  idParam: c === 'media' ? pref('filename') : pref('id'),
  listPath: `${BASE}/${c}`,
  itemPath: c === 'media' ? `${BASE}/${c}/{filename}` : `${BASE}/${c}/{id}`,
});

const listOp = ({ c, name, listPath }: CollectionNames): CollectionOp => ({
  path: listPath,
  method: 'get',
  op: {
    operationId: `list-${c}`,
    tags: [c],
    summary: `List ${c} (paginated)`,
    parameters: [...SCOPE, ...LIST_PARAMS.map(pref)],
    responses: {
      '200': json(
        {
          allOf: [ref('ListEnvelope'), { type: 'object', properties: { docs: { type: 'array', items: ref(name) } } }],
        },
        'One page of records',
      ),
      ...ERRORS,
    },
  },
});

const getOp = ({ c, name, idParam, itemPath }: CollectionNames): CollectionOp => ({
  path: itemPath,
  method: 'get',
  op: {
    operationId: `get-${c}`,
    tags: [c],
    summary: `One ${c} record`,
    parameters: [...SCOPE, idParam, ...READ_PARAMS.map(pref)],
    responses: { '200': json(ref(name), 'The record'), ...ERRORS },
  },
});

const createOp = ({ c, name, listPath }: CollectionNames): CollectionOp => ({
  path: listPath,
  method: 'post',
  op: {
    operationId: `create-${c}`,
    tags: [c],
    summary: `Create a ${c} record`,
    parameters: [...SCOPE, ...READ_PARAMS.map(pref)],
    requestBody: OBJECT_BODY,
    responses: { '201': json(ref(name), 'The created record'), ...ERRORS },
  },
});

const updateOp =
  (method: 'put' | 'patch') =>
  ({ c, name, idParam, itemPath }: CollectionNames): CollectionOp => ({
    path: itemPath,
    method,
    op: {
      operationId: `${method}-${c}`,
      tags: [c],
      summary: `Update a ${c} record (partial: omitted fields are left unchanged)`,
      parameters: [...SCOPE, idParam, ...(c === 'custom-attributes' ? ['select', 'populate'] : READ_PARAMS).map(pref)],
      requestBody: OBJECT_BODY,
      responses: { '200': json(ref(name), 'The updated record'), ...ERRORS },
    },
  });

const deleteOp = ({ c, name, idParam, itemPath }: CollectionNames): CollectionOp => ({
  path: itemPath,
  method: 'delete',
  op: {
    operationId: `delete-${c}`,
    tags: [c],
    summary: `Delete a ${c} record; returns it as {doc, message}`,
    parameters: [...SCOPE, idParam],
    responses: {
      '200': json(
        {
          type: 'object',
          required: ['doc', 'message'],
          properties: { doc: ref(name), message: { type: 'string', const: 'Deleted successfully.' } },
        },
        'The deleted record, as Payload answers it',
      ),
      ...ERRORS,
    },
  },
});

const OP_BUILDERS: Record<RouteOp, (n: CollectionNames) => CollectionOp> = {
  list: listOp,
  get: getOp,
  create: createOp,
  put: updateOp('put'),
  patch: updateOp('patch'),
  delete: deleteOp,
};

/** Payload's bulk update and delete: every record matching `where`, each on its own. */
const manyOp = ({ c, name }: CollectionNames, verb: 'update' | 'delete'): JsonObject => ({
  operationId: `${verb}-many-${c}`,
  tags: [c],
  summary: `${verb === 'update' ? 'Update' : 'Delete'} every ${c} record matching where`,
  parameters: [...SCOPE, pref('where'), pref('draft'), pref('depth')],
  ...(verb === 'update' ? { requestBody: OBJECT_BODY } : {}),
  responses: {
    '200': json(
      {
        type: 'object',
        properties: {
          docs: { type: 'array', items: ref(name) },
          errors: {
            type: 'array',
            items: {
              type: 'object',
              properties: { id: { type: 'string' }, isPublic: { type: 'boolean' }, message: { type: 'string' } },
            },
          },
          message: { type: 'string' },
        },
      },
      'The changed records, per-record errors and a summary',
    ),
    ...ERRORS,
  },
});

/** The routes of one collection: its served operations, then (with `full`) the bulk update and delete by `where`. */
export function addCollectionPaths(
  paths: Paths,
  c: CollectionSlug,
  served: readonly RouteOp[],
  withMany: boolean,
): void {
  const names = namesOf(c);
  for (const op of served) {
    const { path, method, op: operation } = OP_BUILDERS[op](names);
    addOp(paths, path, method, operation);
  }
  if (!withMany) return;
  addOp(paths, names.listPath, 'patch', manyOp(names, 'update'));
  addOp(paths, names.listPath, 'delete', manyOp(names, 'delete'));
}

/** `PATCH /{collection}/{kind}`: the bulk set/unset routes. */
export function addBulkPaths(paths: Paths): void {
  for (const b of BULK_ROUTES) {
    addOp(paths, `${BASE}/${b.collection}/${b.kind}`, 'patch', {
      operationId: `bulk-${b.collection}-${b.kind}`,
      tags: [b.collection],
      summary: `Bulk set/unset ${b.kind} of ${b.collection}`,
      parameters: [...SCOPE, pref('draft')],
      requestBody: jsonBody(ref('BulkRequest')),
      responses: { '200': json(ref('BulkResponse'), 'Per-record results'), ...ERRORS },
    });
  }
}

/** `GET /{collection}/theme-settings/schema`. */
export function addThemeSchemaPaths(paths: Paths): void {
  for (const c of THEME_SCHEMA_COLLECTIONS) {
    addOp(paths, `${BASE}/${c}/theme-settings/schema`, 'get', {
      operationId: `theme-settings-schema-${c}`,
      tags: [c],
      summary: `Theme settings available for ${c}`,
      parameters: SCOPE,
      responses: { '200': json(ref('ThemeSettingsSchema'), 'The schema'), ...ERRORS },
    });
  }
}

const HTML_PAGE: JsonObject = { description: 'HTML page', content: { 'text/html': { schema: { type: 'string' } } } };

/** The routes answered without a key: this description, Swagger UI and the GraphiQL page. */
export function addPublicPaths(paths: Paths): void {
  const pub = { security: [] };
  addOp(paths, '/openapi', 'get', {
    ...pub,
    operationId: 'openapi',
    summary: 'This description',
    responses: { '200': json({ type: 'object' }, 'OpenAPI 3.1') },
  });
  addOp(paths, '/{version}/openapi', 'get', {
    ...pub,
    operationId: 'openapi-version',
    summary: 'The description of one version',
    parameters: [pref('version')],
    responses: { '200': json({ type: 'object' }, 'OpenAPI 3.1'), '404': { $ref: '#/components/responses/NotFound' } },
  });
  addOp(paths, '/docs', 'get', {
    ...pub,
    operationId: 'docs',
    summary: 'Swagger UI',
    responses: { '200': HTML_PAGE },
  });
  addOp(paths, `${BASE}/graphql`, 'get', {
    ...pub,
    operationId: 'graphiql',
    summary: 'GraphiQL page (with Accept: text/html and no query); GraphQL itself is not simulated (501)',
    parameters: SCOPE,
    responses: {
      '200': HTML_PAGE,
      '501': json(ref('Errors'), 'GraphQL queries are not supported by the simulator'),
    },
  });
}
