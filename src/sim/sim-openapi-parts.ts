import type { CollectionSlug } from '../vocabulary/collections.js';
import type { JsonObject } from '../vocabulary/ids.js';

/** The pieces every part of the OpenAPI document is written with. */

export const schemaName = (c: CollectionSlug): string =>
  c
    .split('-')
    .map((w) => (w[0] ?? '').toUpperCase() + w.slice(1))
    .join('');

export const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
export const pref = (name: string): JsonObject => ({ $ref: `#/components/parameters/${name}` });
export const json = (schema: JsonObject, description: string): JsonObject => ({
  description,
  content: { 'application/json': { schema } },
});

/** A required JSON body of the given schema. */
export const jsonBody = (schema: JsonObject): JsonObject => ({
  required: true,
  content: { 'application/json': { schema } },
});

export const ERRORS: JsonObject = {
  '400': { $ref: '#/components/responses/BadRequest' },
  '401': { $ref: '#/components/responses/Unauthorized' },
  '404': { $ref: '#/components/responses/NotFound' },
  '429': { $ref: '#/components/responses/TooManyRequests' },
};

export const READ_PARAMS = ['select', 'populate', 'depth', 'locale', 'fallbackLocale', 'draft', 'joins'];
export const LIST_PARAMS = [
  ...READ_PARAMS,
  'limit',
  'page',
  'sort',
  'where',
  'pagination',
  'attributeWhere',
  'whereOperators',
];

/** `/{version}/{tenant}` and its two path parameters: the prefix of every data route. */
export const BASE = '/{version}/{tenant}';
export const SCOPE = [pref('version'), pref('tenant')];

/** The operations of the document by path, then by method, in the order they were added. */
export type Paths = Record<string, JsonObject>;

export const addOp = (paths: Paths, path: string, method: string, op: JsonObject): void => {
  paths[path] = { ...(paths[path] ?? {}), [method]: op };
};
