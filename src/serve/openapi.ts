import { recordSchemas } from '../sim/sim-openapi.js';
import { sampleRecords } from '../sim/sim-openapi-doc.js';
import type { Paths } from '../sim/sim-openapi-parts.js';
import { API_VERSION } from '../vocabulary/collections.js';
import type { JsonObject } from '../vocabulary/ids.js';
import { componentParameters, componentSchemas, SECURITY_SCHEMES } from './openapi-parts.js';
import { addReadPaths } from './openapi-read-paths.js';
import { addV1Paths } from './openapi-v1-paths.js';
import { addWritePaths } from './openapi-write-paths.js';

/**
 * The records' schemas, as the simulator describes the upstream's: inferred from the depth-0 samples of one fixed
 * seed, so the document is the same on every run and every host.
 */
const RECORD_SEED = 1;

/** Each collection's record schema, named `<Collection>Record` (`EventInstancesRecord`). */
const records = (): JsonObject =>
  Object.fromEntries(
    Object.entries(recordSchemas(sampleRecords({ seed: RECORD_SEED, maxLimit: 100, origin: 'http://localhost' }))).map(
      ([name, schema]) => [`${name}Record`, schema],
    ),
  );

let built: JsonObject | undefined;

/**
 * The OpenAPI 3.1 document of `understudy serve` (`GET /v1/openapi.json`): the writes and reads at the upstream's
 * paths, following writes, the change feed. Generated from the valibot schemas that validate and build the answers
 * (`serve-schemas.ts`, the write bodies); built once, the same on every call.
 */
export function serveOpenApi(): Record<string, unknown> {
  built ??= buildServeOpenApi();
  return built;
}

function buildServeOpenApi(): JsonObject {
  const paths: Paths = {};
  addWritePaths(paths);
  addReadPaths(paths);
  addV1Paths(paths);
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'understudy serve',
      version: API_VERSION,
      description:
        "Writes in the Content Partners API's own shape, queued and followed; the mirror's reads and change feed. " +
        'Every error is `application/problem+json` (RFC 9457) with the US_* code of docs/errors.md.',
    },
    tags: [
      { name: 'writes', description: 'Scope `write`' },
      { name: 'reads', description: 'Scope `read`' },
      { name: 'changes', description: 'Scope `changes`' },
      { name: 'description', description: 'No token needed' },
    ],
    paths,
    components: {
      securitySchemes: SECURITY_SCHEMES,
      parameters: componentParameters(),
      schemas: { ...componentSchemas(), ...records() },
    },
  };
}
