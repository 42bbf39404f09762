import { API_VERSION, COLLECTIONS, type CollectionSlug, type RouteSet, routesFor } from '../vocabulary/collections.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../vocabulary/ids.js';
import { PARAMETERS, RESPONSES, SECURITY_SCHEMES, SHARED_SCHEMAS } from './sim-openapi-components.js';
import type { Paths } from './sim-openapi-parts.js';
import { schemaName } from './sim-openapi-parts.js';
import { addBulkPaths, addCollectionPaths, addPublicPaths, addThemeSchemaPaths } from './sim-openapi-paths.js';
import { ISO_RE, RELATIONSHIPS } from './sim-schema.js';

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

/** A collection's schema: inferred from a sample, relationships as ids (objects when populated). */
function collectionSchema(c: CollectionSlug, sample: JsonObject | undefined): JsonObject {
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
  return s;
}

/** Each collection's record schema, named by `schemaName` (`EventInstances`), from depth-0 samples. */
export function recordSchemas(samples: Partial<Record<CollectionSlug, JsonObject>>): Record<string, JsonObject> {
  return Object.fromEntries(COLLECTIONS.map((c) => [schemaName(c), collectionSchema(c, samples[c])]));
}

/** Every route served under the route set, by route group. */
function pathsOf(routeSet: RouteSet): Paths {
  const paths: Paths = {};
  for (const c of COLLECTIONS) addCollectionPaths(paths, c, routesFor(c, routeSet), routeSet === 'full');
  addBulkPaths(paths);
  addThemeSchemaPaths(paths);
  addPublicPaths(paths);
  return paths;
}

/** The OpenAPI 3.1 description of exactly the routes served under a route set. */
export function buildOpenApi(routeSet: RouteSet, samples: Partial<Record<CollectionSlug, JsonObject>>): JsonObject {
  const schemas: JsonObject = { ...SHARED_SCHEMAS, ...recordSchemas(samples) };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Content Partners API (understudy simulator)',
      version: API_VERSION,
      description: `Routes served under the "${routeSet}" route set.`,
    },
    servers: [{ url: '/partners' }],
    security: [{ apiKey: [] }],
    paths: pathsOf(routeSet),
    components: {
      securitySchemes: SECURITY_SCHEMES,
      parameters: PARAMETERS,
      responses: RESPONSES,
      schemas,
    },
  };
}
