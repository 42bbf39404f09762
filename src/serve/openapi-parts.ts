import { type ConversionConfig, toJsonSchema, toJsonSchemaDefs } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { PARAMETERS, SHARED_SCHEMAS } from '../sim/sim-openapi-components.js';
import { json, ref } from '../sim/sim-openapi-parts.js';
import type { JsonObject } from '../vocabulary/ids.js';
import { TENANT_SLUG } from '../vocabulary/ids.js';
import { jsonNumber, WRITE_BODY_DEFINITIONS } from '../writes/write-job-schema.js';
import {
  AcceptedWriteSchema,
  BulkFailureSchema,
  BulkSummarySchema,
  ChangeSchema,
  FailedWriteSchema,
  ProblemSchema,
  RetryResultSchema,
  WriteAnswerSchema,
  WriteFailureSchema,
  WriteLogEntrySchema,
  WriteStateNameSchema,
} from './serve-schemas.js';

/** The pieces serve's OpenAPI document is written with: its named schemas, parameters, answers and security. */

/** The valibot schemas the document names in `components.schemas`: serve's own, then the write bodies'. */
const DEFINITIONS: Readonly<Record<string, v.GenericSchema>> = {
  Problem: ProblemSchema,
  AcceptedWrite: AcceptedWriteSchema,
  WriteStateName: WriteStateNameSchema,
  WriteFailure: WriteFailureSchema,
  BulkFailure: BulkFailureSchema,
  BulkSummary: BulkSummarySchema,
  WriteLogEntry: WriteLogEntrySchema,
  WriteDetails: WriteAnswerSchema,
  FailedWrite: FailedWriteSchema,
  RetryResult: RetryResultSchema,
  Change: ChangeSchema,
  ...WRITE_BODY_DEFINITIONS,
};

const CONVERSION: ConversionConfig = {
  target: 'draft-2020-12',
  definitions: DEFINITIONS,
  // `readonly` says how TypeScript may use a value, nothing about its JSON.
  ignoreActions: ['readonly'],
  overrideRef: ({ referenceId }) => `#/components/schemas/${referenceId}`,
  overrideSchema: ({ valibotSchema }) => jsonNumber(valibotSchema),
};

/** A valibot schema as the document writes it: a `$ref` to a named schema, or inline (its names as `$ref`s). */
export const schemaOf = (schema: v.GenericSchema): JsonObject => {
  const { $schema: _s, $defs: _d, ...rest } = toJsonSchema(schema, CONVERSION);
  return rest as JsonObject;
};

/**
 * `components.schemas`: the valibot definitions converted, then the upstream's as the simulator describes them (the
 * list envelope, the bulk answer, the error body of a bad read parameter).
 */
export const componentSchemas = (): JsonObject => ({
  ...(toJsonSchemaDefs(DEFINITIONS, CONVERSION) as JsonObject),
  ListEnvelope: SHARED_SCHEMAS.ListEnvelope ?? {},
  BulkResponse: SHARED_SCHEMAS.BulkResponse ?? {},
  Errors: UPSTREAM_ERRORS,
});

/**
 * The upstream's error body (`{ errors: [{ message, name?, data? }] }`) as serve's reads answer it: a bad `where`
 * or `sort` carries Payload's QueryError, whose `data` is a list (`[{ path }]`), a ValidationError an object.
 */
const UPSTREAM_ERRORS: JsonObject = {
  type: 'object',
  required: ['errors'],
  properties: {
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['message'],
        properties: { message: { type: 'string' }, name: { type: 'string' }, data: { type: ['object', 'array'] } },
      },
    },
  },
};

export { json, ref };

/** A `$ref` to a parameter of `components.parameters`. */
export const param = (name: string): JsonObject => ({ $ref: `#/components/parameters/${name}` });

const header = (name: string, schema: JsonObject, description: string): JsonObject => ({
  name,
  in: 'header',
  required: false,
  description,
  schema,
});

/** The upstream's query parameters, as the simulator describes them (reads and `draft`). */
const UPSTREAM_QUERY = ['where', 'sort', 'limit', 'page', 'pagination', 'depth', 'draft', 'locale', 'fallbackLocale'];

/** `components.parameters`. */
export const componentParameters = (): JsonObject => ({
  tenant: {
    name: 'tenant',
    in: 'path',
    required: true,
    description: 'Tenant slug (the token must hold it)',
    schema: { type: 'string', pattern: TENANT_SLUG.source },
  },
  id: {
    name: 'id',
    in: 'path',
    required: true,
    description: 'Record id (media: filename)',
    schema: { type: 'string' },
  },
  writeId: { name: 'id', in: 'path', required: true, description: 'Write job id', schema: { type: 'string' } },
  idempotencyKey: header(
    'Idempotency-Key',
    { type: 'string', minLength: 1, maxLength: 200 },
    'Same key, same write: the job it names is answered (200) instead of a new one; the same key with a different ' +
      'request is refused (422). The same key given to enqueue or the TypeScript client names the same job.',
  ),
  prefer: header(
    'Prefer',
    { type: 'string', examples: ['wait=30'] },
    'RFC 7240 `wait=N` (N ≤ 60 seconds): answer as the upstream did once the write is done; 202 if it is still ' +
      'running after N seconds (without Preference-Applied).',
  ),
  lastEventId: header(
    'Last-Event-ID',
    { type: 'string', pattern: '^[0-9]+$' },
    'Resume after this seq (sent by EventSource on reconnect)',
  ),
  ...Object.fromEntries(UPSTREAM_QUERY.map((name) => [name, PARAMETERS[name] ?? {}])),
});

const PROBLEM_TEXT: Readonly<Record<number, string>> = {
  400: 'The request is malformed: a bad parameter, header or body',
  401: 'No token, or a wrong one',
  403: 'The token does not hold the scope or the tenant',
  404: 'No such route, tenant, write or record',
  405: 'The path has no such method',
  410: '`since` (or Last-Event-ID) is older than the retention: the detail names the oldest seq kept',
  413: 'The body is over the cap',
  422:
    'Refused: the body does not fit its route, the Idempotency-Key was used for another request, or nothing ' +
    'can be done (a write that is not failed)',
  429: "Over the token's rate limit (`api.rateLimit`)",
  500: 'An unexpected error (no stack trace is ever sent)',
  503: 'Redis (US_REDIS) or the mirror cannot be reached',
};

const RESPONSE_HEADERS: Readonly<Record<number, JsonObject>> = {
  401: { 'WWW-Authenticate': { required: true, schema: { type: 'string', pattern: '^Bearer' } } },
  429: {
    'Retry-After': { required: true, description: 'Seconds', schema: { type: 'string' } },
    'RateLimit-Limit': { schema: { type: 'string' } },
    'RateLimit-Remaining': { schema: { type: 'string' } },
    'RateLimit-Reset': { schema: { type: 'string' } },
  },
  503: { 'Retry-After': { description: 'Seconds', schema: { type: 'string' } } },
};

export const PROBLEM_TYPE = 'application/problem+json';

/** One problem answer (RFC 9457); `also` adds other media types the status may come as. */
export const problem = (status: number, also: JsonObject = {}): JsonObject => ({
  description: PROBLEM_TEXT[status] ?? 'An error',
  ...(RESPONSE_HEADERS[status] ? { headers: RESPONSE_HEADERS[status] } : {}),
  content: { [PROBLEM_TYPE]: { schema: ref('Problem') }, ...also },
});

/** Problem answers for each status. */
export const problems = (...statuses: readonly number[]): JsonObject =>
  Object.fromEntries(statuses.map((s) => [String(s), problem(s)]));

/** The statuses every route with a token may answer with a problem. */
export const AUTH_ERRORS = [401, 403, 429, 500, 503] as const;

export type Scope = 'write' | 'read' | 'changes';

/** The route needs a token (either scheme) holding `scope`. */
export const needs = (scope: Scope): JsonObject[] => [{ bearer: [scope] }, { apiKey: [scope] }];

export const SECURITY_SCHEMES: JsonObject = {
  bearer: {
    type: 'http',
    scheme: 'bearer',
    description: 'A token of config `api.tokens`: `Authorization: Bearer <token>`. Scopes: write, read, changes.',
  },
  apiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description:
      "The upstream's own scheme, so a Partners API client changes only its base URL and key: exactly " +
      '`users API-Key <token>`.',
  },
};
