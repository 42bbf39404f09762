import {
  API_VERSION,
  BULK_ROUTES,
  COLLECTIONS,
  type CollectionSlug,
  type RouteSet,
  routesFor,
  THEME_SCHEMA_COLLECTIONS,
} from '../vocabulary/collections.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../vocabulary/ids.js';
import { ISO_RE, RELATIONSHIPS } from './sim-schema.js';

const schemaName = (c: CollectionSlug): string =>
  c
    .split('-')
    .map((w) => (w[0] ?? '').toUpperCase() + w.slice(1))
    .join('');

/** A loose JSON Schema for a sample value (every field may also be null). */
const infer = (v: JsonValue): JsonObject => {
  if (v === null) return {};
  if (typeof v === 'string')
    return ISO_RE.test(v) ? { type: ['string', 'null'], format: 'date-time' } : { type: ['string', 'null'] };
  if (typeof v === 'number') return { type: ['number', 'null'] };
  if (typeof v === 'boolean') return { type: ['boolean', 'null'] };
  if (Array.isArray(v)) return { type: 'array', items: v.length ? infer(v[0] as JsonValue) : {} };
  const properties: JsonObject = {};
  for (const [k, x] of Object.entries(v)) properties[k] = infer(x);
  return { type: ['object', 'null'], properties, additionalProperties: true };
};

const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
const pref = (name: string): JsonObject => ({ $ref: `#/components/parameters/${name}` });
const json = (schema: JsonObject, description: string): JsonObject => ({
  description,
  content: { 'application/json': { schema } },
});

const ERRORS: JsonObject = {
  '400': { $ref: '#/components/responses/BadRequest' },
  '401': { $ref: '#/components/responses/Unauthorized' },
  '404': { $ref: '#/components/responses/NotFound' },
  '429': { $ref: '#/components/responses/TooManyRequests' },
};

const READ_PARAMS = ['select', 'populate', 'depth', 'locale', 'fallbackLocale', 'draft', 'joins'];
const LIST_PARAMS = [
  ...READ_PARAMS,
  'limit',
  'page',
  'sort',
  'where',
  'pagination',
  'attributeWhere',
  'whereOperators',
];

/** The OpenAPI 3.1 description of exactly the routes served under a route set. */
export function buildOpenApi(routeSet: RouteSet, samples: Partial<Record<CollectionSlug, JsonObject>>): JsonObject {
  const paths: Record<string, JsonObject> = {};
  const add = (path: string, method: string, op: JsonObject): void => {
    paths[path] = { ...(paths[path] ?? {}), [method]: op };
  };
  const base = '/{version}/{tenant}';
  const scope = [pref('version'), pref('tenant')];
  for (const c of COLLECTIONS) {
    const name = schemaName(c);
    const idParam = c === 'media' ? pref('filename') : pref('id');
    const itemPath = c === 'media' ? `${base}/${c}/{filename}` : `${base}/${c}/{id}`;
    for (const op of routesFor(c, routeSet)) {
      const tags = [c];
      switch (op) {
        case 'list':
          add(`${base}/${c}`, 'get', {
            operationId: `list-${c}`,
            tags,
            summary: `List ${c} (paginated)`,
            parameters: [...scope, ...LIST_PARAMS.map(pref)],
            responses: {
              '200': json(
                {
                  allOf: [
                    ref('ListEnvelope'),
                    { type: 'object', properties: { docs: { type: 'array', items: ref(name) } } },
                  ],
                },
                'One page of records',
              ),
              ...ERRORS,
            },
          });
          break;
        case 'get':
          add(itemPath, 'get', {
            operationId: `get-${c}`,
            tags,
            summary: `One ${c} record`,
            parameters: [...scope, idParam, ...READ_PARAMS.map(pref)],
            responses: { '200': json(ref(name), 'The record'), ...ERRORS },
          });
          break;
        case 'create':
          add(`${base}/${c}`, 'post', {
            operationId: `create-${c}`,
            tags,
            summary: `Create a ${c} record`,
            parameters: [...scope, ...READ_PARAMS.map(pref)],
            requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
            responses: { '201': json(ref(name), 'The created record'), ...ERRORS },
          });
          break;
        case 'put':
        case 'patch':
          add(itemPath, op, {
            operationId: `${op}-${c}`,
            tags,
            summary: `Update a ${c} record (partial: omitted fields are left unchanged)`,
            parameters: [
              ...scope,
              idParam,
              ...(c === 'custom-attributes' ? ['select', 'populate'] : READ_PARAMS).map(pref),
            ],
            requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
            responses: { '200': json(ref(name), 'The updated record'), ...ERRORS },
          });
          break;
        case 'delete':
          add(itemPath, 'delete', {
            operationId: `delete-${c}`,
            tags,
            summary: `Delete a ${c} record; returns it as {doc, message}`,
            parameters: [...scope, idParam],
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
          });
          break;
      }
    }
    if (routeSet === 'full') {
      // Payload's bulk update and delete: every record matching `where`, each on its own.
      const many = (verb: 'update' | 'delete'): JsonObject => ({
        operationId: `${verb}-many-${c}`,
        tags: [c],
        summary: `${verb === 'update' ? 'Update' : 'Delete'} every ${c} record matching where`,
        parameters: [...scope, pref('where'), pref('draft'), pref('depth')],
        ...(verb === 'update'
          ? { requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } } }
          : {}),
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
      add(`${base}/${c}`, 'patch', many('update'));
      add(`${base}/${c}`, 'delete', many('delete'));
    }
  }
  for (const b of BULK_ROUTES) {
    add(`${base}/${b.collection}/${b.kind}`, 'patch', {
      operationId: `bulk-${b.collection}-${b.kind}`,
      tags: [b.collection],
      summary: `Bulk set/unset ${b.kind} of ${b.collection}`,
      parameters: [...scope, pref('draft')],
      requestBody: { required: true, content: { 'application/json': { schema: ref('BulkRequest') } } },
      responses: { '200': json(ref('BulkResponse'), 'Per-record results'), ...ERRORS },
    });
  }
  for (const c of THEME_SCHEMA_COLLECTIONS) {
    add(`${base}/${c}/theme-settings/schema`, 'get', {
      operationId: `theme-settings-schema-${c}`,
      tags: [c],
      summary: `Theme settings available for ${c}`,
      parameters: scope,
      responses: { '200': json(ref('ThemeSettingsSchema'), 'The schema'), ...ERRORS },
    });
  }
  const pub = { security: [] };
  add('/openapi', 'get', {
    ...pub,
    operationId: 'openapi',
    summary: 'This description',
    responses: { '200': json({ type: 'object' }, 'OpenAPI 3.1') },
  });
  add('/{version}/openapi', 'get', {
    ...pub,
    operationId: 'openapi-version',
    summary: 'The description of one version',
    parameters: [pref('version')],
    responses: { '200': json({ type: 'object' }, 'OpenAPI 3.1'), '404': { $ref: '#/components/responses/NotFound' } },
  });
  add('/docs', 'get', {
    ...pub,
    operationId: 'docs',
    summary: 'Swagger UI',
    responses: { '200': { description: 'HTML page', content: { 'text/html': { schema: { type: 'string' } } } } },
  });
  add(`${base}/graphql`, 'get', {
    ...pub,
    operationId: 'graphiql',
    summary: 'GraphiQL page (with Accept: text/html and no query); GraphQL itself is not simulated (501)',
    parameters: scope,
    responses: {
      '200': { description: 'HTML page', content: { 'text/html': { schema: { type: 'string' } } } },
      '501': json(ref('Errors'), 'GraphQL queries are not supported by the simulator'),
    },
  });

  const schemas: JsonObject = {
    ListEnvelope: {
      type: 'object',
      required: [
        'docs',
        'totalDocs',
        'limit',
        'totalPages',
        'page',
        'pagingCounter',
        'hasPrevPage',
        'hasNextPage',
        'prevPage',
        'nextPage',
      ],
      properties: {
        docs: { type: 'array', items: { type: 'object' } },
        totalDocs: { type: 'integer' },
        limit: { type: 'integer' },
        totalPages: { type: 'integer' },
        page: { type: 'integer' },
        pagingCounter: { type: 'integer' },
        hasPrevPage: { type: 'boolean' },
        hasNextPage: { type: 'boolean' },
        prevPage: { type: ['integer', 'null'] },
        nextPage: { type: ['integer', 'null'] },
      },
    },
    Errors: {
      type: 'object',
      required: ['errors'],
      properties: {
        errors: {
          type: 'array',
          items: {
            type: 'object',
            required: ['message'],
            properties: { message: { type: 'string' }, data: { type: 'object' } },
          },
        },
      },
    },
    AuthError: {
      type: 'object',
      required: ['error', 'message'],
      properties: { error: { type: 'string' }, message: { type: 'string' } },
    },
    BulkRequest: {
      type: 'object',
      description: 'Exactly one of where, ids or all (true). set maps configured keys to values; unset lists keys.',
      properties: {
        where: { type: 'object' },
        ids: { type: 'array', items: { type: 'string' } },
        all: { type: 'boolean' },
        set: { type: 'object', additionalProperties: true },
        unset: { type: 'array', items: { type: 'string' } },
        dryRun: { type: 'boolean' },
      },
      additionalProperties: false,
    },
    BulkResponse: {
      type: 'object',
      properties: {
        dryRun: { type: 'boolean' },
        versionTarget: { type: 'string', enum: ['published', 'draft'] },
        ...Object.fromEntries(
          [
            'matched',
            'updated',
            'wouldUpdate',
            'unchanged',
            'failed',
            'draftSynced',
            'draftWouldSync',
            'draftSyncSkipped',
            'draftSyncFailed',
          ].map((k) => [k, { type: 'integer' }]),
        ),
        results: {
          type: 'array',
          items: {
            type: 'object',
            required: ['id', 'status'],
            properties: {
              id: { type: 'string' },
              status: { type: 'string', enum: ['updated', 'wouldUpdate', 'unchanged', 'failed'] },
              set: { type: 'array', items: { type: 'string' } },
              unset: { type: 'array', items: { type: 'string' } },
              draftSync: {
                type: 'object',
                properties: {
                  status: { type: 'string', enum: ['synced', 'wouldSync', 'skipped', 'failed'] },
                  set: { type: 'array', items: { type: 'string' } },
                  unset: { type: 'array', items: { type: 'string' } },
                  error: { type: 'object' },
                },
              },
              error: {
                type: 'object',
                properties: { message: { type: 'string' }, status: { type: 'integer' } },
              },
            },
          },
        },
      },
    },
    ThemeSettingsSchema: {
      type: 'object',
      properties: {
        collection: { type: 'string' },
        configurationAvailable: { type: 'boolean' },
        template: { type: ['string', 'null'] },
        reason: { type: ['string', 'null'] },
        fields: { type: 'array', items: { type: 'object' } },
      },
    },
  };
  for (const c of COLLECTIONS) {
    const sample = samples[c];
    const s = sample ? infer(sample) : { type: 'object' };
    if (isJsonObject(s.properties)) {
      for (const r of RELATIONSHIPS[c]) {
        s.properties[r.field] = r.hasMany
          ? {
              type: 'array',
              items: { oneOf: [{ type: 'string' }, { type: 'object' }] },
              description: `${r.to} ids (objects at depth >= 1)`,
            }
          : {
              oneOf: [{ type: 'string' }, { type: 'object' }, { type: 'null' }],
              description: `${r.to} id (object at depth >= 1)`,
            };
      }
    }
    s.type = 'object';
    schemas[schemaName(c)] = s;
  }
  const q = (name: string, schema: JsonObject, description: string, deep = false): JsonObject => ({
    name,
    in: 'query',
    required: false,
    description,
    schema,
    ...(deep ? { style: 'deepObject', explode: true } : {}),
  });
  return {
    openapi: '3.1.0',
    info: {
      title: 'Content Partners API (understudy simulator)',
      version: API_VERSION,
      description: `Routes served under the "${routeSet}" route set.`,
    },
    servers: [{ url: '/partners' }],
    security: [{ apiKey: [] }],
    paths,
    components: {
      securitySchemes: {
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: 'Exactly `users API-Key <key>` (one space, raw key).',
        },
      },
      parameters: {
        version: {
          name: 'version',
          in: 'path',
          required: true,
          schema: { type: 'string', enum: [API_VERSION], default: API_VERSION },
        },
        tenant: { name: 'tenant', in: 'path', required: true, schema: { type: 'string' }, description: 'Tenant slug' },
        id: { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
        filename: {
          name: 'filename',
          in: 'path',
          required: true,
          schema: { type: 'string' },
          description: 'Media are addressed by filename',
        },
        select: q('select', { type: 'object' }, 'select[field]=true', true),
        populate: q('populate', { type: 'object' }, 'populate[collection][field]=true', true),
        depth: q('depth', { type: 'integer', minimum: 0, default: 2 }, 'Relationship population depth'),
        locale: q('locale', { type: 'string', enum: ['en', 'fr', 'all'], default: 'en' }, 'Content locale'),
        fallbackLocale: q(
          'fallbackLocale',
          { type: 'string', default: 'en' },
          'Locale used when a value is missing; none for no fallback',
        ),
        draft: q('draft', { type: 'boolean', default: false }, 'Read or write the draft version'),
        joins: q('joins', { type: 'object' }, 'joins[field][limit]=n', true),
        limit: q('limit', { type: 'integer', minimum: 0, default: 10 }, 'Items per page (clamped to the maximum)'),
        page: q('page', { type: 'integer', minimum: 1, default: 1 }, 'Page number'),
        sort: q('sort', { type: 'string' }, 'Fields, - for descending, comma-separated tie-breakers'),
        where: q('where', { type: 'object' }, 'where[field][operator]=value', true),
        pagination: q('pagination', { type: 'boolean', default: true }, 'false returns every match'),
        attributeWhere: q('attributeWhere', { type: 'object' }, 'Accepted and ignored by the simulator', true),
        whereOperators: q('whereOperators', { type: 'object' }, 'Accepted and ignored by the simulator', true),
      },
      responses: {
        BadRequest: json(ref('Errors'), 'Invalid query or body'),
        Unauthorized: json(ref('AuthError'), 'API key absent or invalid'),
        NotFound: json(ref('Errors'), 'No such record or route'),
        TooManyRequests: json(ref('Errors'), 'Rate limit exceeded; see Retry-After'),
      },
      schemas,
    },
  };
}
