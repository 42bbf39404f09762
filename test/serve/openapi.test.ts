import { Validator } from '@seriousme/openapi-schema-validator';
import * as v from 'valibot';
import { describe, expect, it, vi } from 'vitest';
import { serveOpenApi } from '../../src/serve/openapi.js';
import { API_VERSION, BULK_ROUTES, COLLECTIONS } from '../../src/vocabulary/collections.js';
import { writeRequestSchema } from '../../src/writes/write-request-schema.js';
import { checkRequestBody } from './answer-check.js';

type Operation = {
  parameters?: { $ref?: string }[];
  requestBody?: { content: Record<string, { schema: { $ref?: string } }> };
  responses: Record<string, { content?: Record<string, unknown>; headers?: Record<string, unknown> }>;
  security: unknown[];
};
const doc = serveOpenApi() as {
  openapi: string;
  jsonSchemaDialect: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
};
const P = `/partners/${API_VERSION}/{tenant}`;
const routes = () =>
  Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));

describe("serve's OpenAPI document", () => {
  it('is a valid OpenAPI 3.1 document in the JSON Schema 2020-12 dialect', async () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.jsonSchemaDialect).toBe('https://json-schema.org/draft/2020-12/schema');
    const result = await new Validator().validate(doc as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('is generated the same by a fresh module', async () => {
    vi.resetModules();
    const again = await import('../../src/serve/openapi.js');
    expect(JSON.stringify(again.serveOpenApi())).toBe(JSON.stringify(doc));
  });

  it('describes each write route at the upstream path, with the body its enqueue validation takes', () => {
    const writes = routes().filter((r) => !r.startsWith('GET'));
    expect(writes.filter((r) => r.includes('/partners/')).sort()).toEqual(
      [
        ...['series', 'posts', 'blogs', 'media', 'forms'].map((c) => `POST ${P}/${c}`),
        ...['seasons', 'organizations', 'media', 'custom-attributes', 'redirects'].map((c) => `PUT ${P}/${c}/{id}`),
        `PATCH ${P}/event-instances/{id}`,
        `DELETE ${P}/event-instances/{id}`,
        ...BULK_ROUTES.map((b) => `PATCH ${P}/${b.collection}/${b.kind}`),
      ].sort(),
    );
    const body = (m: string, p: string) => doc.paths[p]?.[m]?.requestBody?.content['application/json']?.schema.$ref;
    expect(body('patch', `${P}/event-instances/{id}`)).toBe('#/components/schemas/eventInstances');
    expect(body('post', `${P}/series`)).toBe('#/components/schemas/seriesCreate');
    expect(body('patch', `${P}/blogs/theme-settings`)).toBe('#/components/schemas/bulkBody');
    expect(doc.paths[`${P}/event-instances/{id}`]?.delete?.requestBody).toBeUndefined();
    const params = (m: string, p: string) => (doc.paths[p]?.[m]?.parameters ?? []).map((x) => x.$ref?.split('/').pop());
    expect(params('post', `${P}/series`)).toEqual(['tenant', 'draft', 'idempotencyKey', 'prefer']);
    expect(params('patch', `${P}/event-instances/{id}`)).toEqual(['tenant', 'id', 'idempotencyKey', 'prefer']);
    const put = doc.paths[`${P}/seasons/{id}`]?.put;
    expect(Object.keys(put?.responses ?? {})).toEqual([
      '200',
      '202',
      '400',
      '401',
      '403',
      '404',
      '405',
      '413',
      '422',
      '429',
      '500',
      '503',
    ]);
    expect(put?.responses['202']?.headers).toHaveProperty('Location');
    expect(put?.security).toEqual([{ bearer: ['write'] }, { apiKey: ['write'] }]);
  });

  it('describes the reads of every collection, following writes, the change feed and itself', () => {
    const reads = routes().filter((r) => r.startsWith('GET /partners/'));
    expect(reads).toHaveLength(COLLECTIONS.length * 2);
    expect(routes().filter((r) => r.includes('/v1/'))).toEqual([
      'GET /v1/writes/{id}',
      'GET /v1/writes',
      'POST /v1/writes/{id}/retry',
      'GET /v1/changes',
      'GET /v1/changes/stream',
      'GET /v1/openapi.json',
      'GET /v1/docs',
    ]);
    expect(doc.paths['/v1/changes/stream']?.get?.responses['200']?.content).toHaveProperty(['text/event-stream']);
    expect(doc.paths['/v1/changes']?.get?.responses).toHaveProperty('410');
    expect(doc.paths['/v1/docs']?.get?.security).toEqual([]);
  });

  it('answers every error as an RFC 9457 problem with a US_* code', () => {
    for (const [path, ops] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(ops))
        for (const [status, answer] of Object.entries(op.responses))
          if (Number(status) >= 400)
            expect(answer.content?.['application/problem+json'], `${method} ${path} ${status}`).toEqual({
              schema: { $ref: '#/components/schemas/Problem' },
            });
    expect(doc.components.schemas.Problem).toMatchObject({
      required: ['type', 'title', 'status', 'detail', 'code'],
      properties: { code: { pattern: '^US_[A-Z0-9_]+$' } },
    });
  });
});

describe("the document's write bodies", () => {
  const enqueueTakes = async (request: Record<string, unknown>) =>
    (await v.safeParseAsync(writeRequestSchema('skip', {}), request)).success;
  const documentTakes = (method: string, path: string, body: unknown) => {
    try {
      checkRequestBody(method, path, body);
      return true;
    } catch {
      return false;
    }
  };

  it.each([
    ['a known field', { startDate: '2026-05-01T19:30:00.000Z', booking: { bookingLinkURL: 'https://x.test/b' } }, true],
    ['a field the shape lacks', { startDat: '2026-05-01T19:30:00.000Z' }, false],
    ['a nested field the shape lacks', { booking: { url: 'https://x.test/b' } }, false],
    ['a value of the wrong type', { ticketingSystemId: 5 }, false],
  ])('take %s exactly when enqueue does (PATCH event-instances)', async (_what, body, takes) => {
    const request = { op: 'patch', tenant: 'acme', collection: 'event-instances', id: '42', body };
    expect(await enqueueTakes(request)).toBe(takes);
    expect(documentTakes('PATCH', '/partners/2026-02/acme/event-instances/42', body)).toBe(takes);
  });

  it.each([
    ['set and unset', { where: { slug: { equals: 'a' } }, set: { colour: 'red' } }, true],
    ['an unknown field', { ids: ['1'], set: { colour: 'red' }, sett: {} }, false],
  ])('take a bulk body with %s exactly when enqueue does', async (_what, body, takes) => {
    const request = { op: 'bulk', tenant: 'acme', collection: 'organizations', body };
    expect(await enqueueTakes(request)).toBe(takes);
    expect(documentTakes('PATCH', '/partners/2026-02/acme/organizations/custom-attributes', body)).toBe(takes);
  });
});
