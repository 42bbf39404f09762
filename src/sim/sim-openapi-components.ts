import { API_VERSION } from '../vocabulary/collections.js';
import type { JsonObject } from '../vocabulary/ids.js';
import { json, ref } from './sim-openapi-parts.js';

/** The parts of `components` that do not depend on the route set or the data: shared schemas, parameters, answers. */

const LIST_ENVELOPE: JsonObject = {
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
};

const ERRORS_SCHEMA: JsonObject = {
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
};

const BULK_REQUEST: JsonObject = {
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
};

const BULK_COUNTS = [
  'matched',
  'updated',
  'wouldUpdate',
  'unchanged',
  'failed',
  'draftSynced',
  'draftWouldSync',
  'draftSyncSkipped',
  'draftSyncFailed',
];

const KEY_LIST: JsonObject = { type: 'array', items: { type: 'string' } };

const BULK_RESULT: JsonObject = {
  type: 'object',
  required: ['id', 'status'],
  properties: {
    id: { type: 'string' },
    status: { type: 'string', enum: ['updated', 'wouldUpdate', 'unchanged', 'failed'] },
    set: KEY_LIST,
    unset: KEY_LIST,
    draftSync: {
      type: 'object',
      properties: {
        status: { type: 'string', enum: ['synced', 'wouldSync', 'skipped', 'failed'] },
        set: KEY_LIST,
        unset: KEY_LIST,
        error: { type: 'object' },
      },
    },
    error: {
      type: 'object',
      properties: { message: { type: 'string' }, status: { type: 'integer' } },
    },
  },
};

const BULK_RESPONSE: JsonObject = {
  type: 'object',
  properties: {
    dryRun: { type: 'boolean' },
    versionTarget: { type: 'string', enum: ['published', 'draft'] },
    ...Object.fromEntries(BULK_COUNTS.map((k) => [k, { type: 'integer' }])),
    results: { type: 'array', items: BULK_RESULT },
  },
};

/** The schemas every document holds, before the one per collection. */
export const SHARED_SCHEMAS: JsonObject = {
  ListEnvelope: LIST_ENVELOPE,
  Errors: ERRORS_SCHEMA,
  AuthError: {
    type: 'object',
    required: ['error', 'message'],
    properties: { error: { type: 'string' }, message: { type: 'string' } },
  },
  BulkRequest: BULK_REQUEST,
  BulkResponse: BULK_RESPONSE,
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

export const SECURITY_SCHEMES: JsonObject = {
  apiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: 'Exactly `users API-Key <key>` (one space, raw key).',
  },
};

const q = (name: string, schema: JsonObject, description: string, deep = false): JsonObject => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
  ...(deep ? { style: 'deepObject', explode: true } : {}),
});

const PATH_PARAMETERS: JsonObject = {
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
};

const QUERY_PARAMETERS: JsonObject = {
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
};

export const PARAMETERS: JsonObject = { ...PATH_PARAMETERS, ...QUERY_PARAMETERS };

export const RESPONSES: JsonObject = {
  BadRequest: json(ref('Errors'), 'Invalid query or body'),
  Unauthorized: json(ref('AuthError'), 'API key absent or invalid'),
  NotFound: json(ref('Errors'), 'No such record or route'),
  TooManyRequests: json(ref('Errors'), 'Rate limit exceeded; see Retry-After'),
};
