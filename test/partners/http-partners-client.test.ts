import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { BadResponseError, UnderstudyError, UpstreamError } from '../../src/errors.js';
import type { Logger } from '../../src/log.js';
import { hasMore } from '../../src/partners/list-envelope.js';
import type { RateGate, RequestKind } from '../../src/partners/rate-gate.js';
import { recordId, tenantSlug } from '../../src/vocabulary/ids.js';
import { envelope, type FakeUpstream, type ScriptedResponse, startFakeUpstream } from '../helpers/fake-upstream.js';
import { testPool } from '../helpers/http-pool.js';
import { createHttpPartnersClient, type HttpClientOptions } from '../helpers/partners-client.js';

const KEY = 'sk_live_s3cret-KEY';
const upstreams: FakeUpstream[] = [];
afterEach(async () => {
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
});

function recordingGate() {
  const acquired: RequestKind[] = [];
  const pauses: number[] = [];
  const gate: RateGate = {
    async acquire(kind) {
      acquired.push(kind);
      return 0;
    },
    settle() {},
    release() {},
    async pause(ms) {
      pauses.push(ms);
    },
    async close() {},
  };
  return { gate, acquired, pauses };
}

async function setup(script: Parameters<typeof startFakeUpstream>[0], over: Partial<HttpClientOptions> = {}) {
  const up = await startFakeUpstream(script);
  upstreams.push(up);
  const g = recordingGate();
  const delays: number[] = [];
  const warnings: unknown[] = [];
  const log = { warn: (obj: unknown) => warnings.push(obj), debug: () => {}, info: () => {} } as unknown as Logger;
  const client = createHttpPartnersClient({
    dispatcher: testPool(),
    baseUrl: `${up.url}/`,
    tenant: tenantSlug('acme'),
    apiKey: KEY,
    gate: g.gate,
    retry: { attempts: 3, baseDelayMs: 100, maxDelayMs: 10_000 },
    timeouts: { headersMs: 50, bodyMs: 50 },
    sleep: async (ms) => {
      delays.push(ms);
    },
    random: () => 0.5,
    log,
    ...over,
  });
  return { up, client, delays, warnings, ...g };
}

const call = () => ({ signal: new AbortController().signal });
const list = { collection: 'series', limit: 10 } as const;

async function rejection(p: Promise<unknown>): Promise<UnderstudyError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof UnderstudyError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

describe('requests', () => {
  it("has no pool of its own: a client built without the composition root's dispatcher is refused", () => {
    const { gate } = recordingGate();
    const opts = { baseUrl: 'http://127.0.0.1:1', tenant: tenantSlug('acme'), apiKey: KEY, gate };
    expect(() => createHttpPartnersClient(opts as unknown as HttpClientOptions)).toThrow(/dispatcher is required/);
  });

  it('sends the exact auth header to the tenant route and gates every request as a read', async () => {
    const { up, client, acquired } = await setup([{ status: 200, json: envelope([{ id: 1 }]) }]);
    const page = await client.listPage(list, call());
    expect(page.docs).toEqual([{ id: 1 }]);
    expect(up.requests).toHaveLength(1);
    const req = up.requests[0]!;
    expect(req.method).toBe('GET');
    expect(req.path).toBe('/partners/2026-02/acme/series');
    expect(req.headers.authorization).toBe(`users API-Key ${KEY}`);
    expect(acquired).toEqual(['read']);
  });

  it('encodes nested where, select, populate and joins in Payload syntax', async () => {
    const { up, client } = await setup([{ status: 200, json: envelope([]) }]);
    await client.listPage(
      {
        ...list,
        page: 2,
        sort: 'updatedAt,id',
        depth: 0,
        draft: true,
        locale: 'all',
        where: {
          or: [
            { updatedAt: { greater_than: '2026-03-01T00:00:00.000Z' } },
            { and: [{ updatedAt: { equals: '2026-03-01T00:00:00.000Z' } }, { id: { greater_than: 'b' } }] },
          ],
        },
        select: { title: true, slug: true },
        populate: { venue: { title: true } },
        joins: { 'event-instances': { limit: 5, sort: '-startDate' } },
      },
      call(),
    );
    const req = up.requests[0]!;
    const decoded = decodeURIComponent(req.rawQuery);
    expect(decoded).toContain('where[or][0][updatedAt][greater_than]=2026-03-01T00:00:00.000Z');
    expect(decoded).toContain('where[or][1][and][1][id][greater_than]=b');
    expect(decoded).toContain('select[title]=true');
    expect(decoded).toContain('draft=true');
    expect(req.query).toEqual({
      limit: '10',
      page: '2',
      sort: 'updatedAt,id',
      depth: '0',
      draft: 'true',
      locale: 'all',
      where: {
        or: [
          { updatedAt: { greater_than: '2026-03-01T00:00:00.000Z' } },
          { and: [{ updatedAt: { equals: '2026-03-01T00:00:00.000Z' } }, { id: { greater_than: 'b' } }] },
        ],
      },
      select: { title: 'true', slug: 'true' },
      populate: { venue: { title: 'true' } },
      joins: { 'event-instances': { limit: '5', sort: '-startDate' } },
    });
  });

  it('URL-encodes ids as one path segment; errors name the record (tenant and id), route keeps the template', async () => {
    const { up, client } = await setup([{ status: 404, json: { message: 'Not Found' } }]);
    const err = await rejection(client.getById('series', recordId('a/b c?'), { depth: 1 }, call()));
    expect(up.requests[0]!.path).toBe('/partners/2026-02/acme/series/a%2Fb%20c%3F');
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err.code).toBe('US_NOT_FOUND');
    expect((err as UpstreamError).route).toBe('/partners/{version}/{tenant}/series/{id}');
    expect(err.message).toBe('GET /partners/2026-02/acme/series/a%2Fb%20c%3F -> 404: Not Found');
  });

  it('fetches openapi without the key, and the schema and bulk routes with it', async () => {
    const { up, client, acquired } = await setup([{ status: 200, json: { openapi: '3.1.0', matched: 1 } }]);
    await client.openapi(call());
    await client.themeSettingsSchema('events', call());
    await client.bulk('series', 'custom-attributes', { all: true }, { draft: true }, call());
    const [openapi, schema, bulk] = up.requests;
    expect(openapi!.path).toBe('/partners/2026-02/openapi');
    expect(openapi!.headers.authorization).toBeUndefined();
    expect(schema!.path).toBe('/partners/2026-02/acme/events/theme-settings/schema');
    expect(schema!.headers.authorization).toBe(`users API-Key ${KEY}`);
    expect(bulk!.method).toBe('PATCH');
    expect(bulk!.path).toBe('/partners/2026-02/acme/series/custom-attributes');
    expect(bulk!.rawQuery).toBe('draft=true');
    expect(JSON.parse(bulk!.body)).toEqual({ all: true });
    expect(acquired).toEqual(['read', 'read', 'write']);
  });

  it('unwraps {doc, message} write answers and keeps bare records as received', async () => {
    const { up, client, acquired } = await setup((req) => {
      if (req.method === 'POST') return { status: 201, json: { doc: { id: 7, slug: 'x' }, message: 'Created' } };
      if (req.method === 'PUT') return { status: 200, json: { id: '8', title: 'T' } };
      return { status: 200, json: { doc: { id: 9 }, message: 'Deleted' } };
    });
    expect(await client.create('series', { slug: 'x' }, {}, call())).toEqual({ id: 7, slug: 'x' });
    expect(await client.update('seasons', recordId('8'), 'PUT', { title: 'T' }, { draft: true }, call())).toEqual({
      id: '8',
      title: 'T',
    });
    expect(await client.delete('event-instances', recordId('9'), call())).toEqual({ id: 9 });
    expect(up.requests.map((r) => `${r.method} ${r.path}?${r.rawQuery}`)).toEqual([
      'POST /partners/2026-02/acme/series?',
      'PUT /partners/2026-02/acme/seasons/8?draft=true',
      'DELETE /partners/2026-02/acme/event-instances/9?',
    ]);
    expect(up.requests[0]!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(up.requests[0]!.body)).toEqual({ slug: 'x' });
    expect(acquired).toEqual(['write', 'write', 'write']);
  });

  it('reports every attempt to onAttempt and onRequest', async () => {
    const seen: unknown[] = [];
    const { client } = await setup([{ status: 503 }, { status: 200, json: envelope([]) }], {
      onRequest: (e) => seen.push({ ...e, ms: 0 }),
    });
    let attempts = 0;
    await client.listPage(list, { ...call(), onAttempt: () => attempts++ });
    expect(attempts).toBe(2);
    expect(seen).toEqual([
      { method: 'GET', route: '/partners/{version}/{tenant}/series', status: 503, ms: 0 },
      { method: 'GET', route: '/partners/{version}/{tenant}/series', status: 200, ms: 0 },
    ]);
  });
});

describe('list envelope', () => {
  it('reads numeric strings and derives missing nextPage/prevPage', async () => {
    const docs = [{ id: 1 }, { id: 2 }];
    const { client } = await setup([
      {
        status: 200,
        json: {
          docs,
          totalDocs: '6',
          limit: '2',
          page: '2',
          totalPages: '3',
          hasNextPage: 'true',
          hasPrevPage: true,
        },
      },
    ]);
    const page = await client.listPage({ ...list, limit: 2, page: 2 }, call());
    expect(page).toEqual({
      docs,
      totalDocs: 6,
      limit: 2,
      totalPages: 3,
      page: 2,
      pagingCounter: 3,
      hasPrevPage: true,
      hasNextPage: true,
      prevPage: 1,
      nextPage: 3,
    });
    expect(hasMore(page, 2)).toBe(true);
  });

  it('tolerates a page past the end reporting totalDocs 0, and says no more', async () => {
    const { client } = await setup([{ status: 200, json: envelope([], { totalDocs: 0, totalPages: 0, page: 4 }) }]);
    const page = await client.listPage({ ...list, page: 4 }, call());
    expect(page.docs).toEqual([]);
    expect(hasMore(page, 10)).toBe(false);
  });

  it('derives metadata for pagination=false answers without it', async () => {
    const { up, client } = await setup([{ status: 200, json: { docs: [{ id: 1 }, { id: 2 }] } }]);
    const page = await client.listPage({ ...list, pagination: false }, call());
    expect(up.requests[0]!.query.pagination).toBe('false');
    expect(page).toMatchObject({ totalDocs: 2, page: 1, totalPages: 1, hasNextPage: false, nextPage: null });
    expect(hasMore(page, 10)).toBe(false);
  });

  it('keeps paging on a full page even when hasNextPage says false, and on hasNextPage with a short page', () => {
    const base = { totalDocs: 0, limit: 2, totalPages: 1, page: 1, pagingCounter: 1 };
    const flags = { hasPrevPage: false, prevPage: null, nextPage: null };
    expect(hasMore({ ...base, ...flags, docs: [{}, {}], hasNextPage: false }, 2)).toBe(true);
    expect(hasMore({ ...base, ...flags, docs: [{}], hasNextPage: true }, 2)).toBe(true);
    expect(hasMore({ ...base, ...flags, docs: [{}], hasNextPage: false }, 2)).toBe(false);
    // A clamped page size counts as full.
    expect(hasMore({ ...base, ...flags, docs: [{}, {}], hasNextPage: false }, 100)).toBe(true);
  });

  it('rejects docs that are not an array of objects as a bad response, after retrying', async () => {
    const { up, client } = await setup([{ status: 200, json: { docs: [1, 2] } }]);
    const err = await rejection(client.listPage(list, call()));
    expect(err).toBeInstanceOf(BadResponseError);
    expect(err.code).toBe('US_BAD_RESPONSE');
    expect(up.requests).toHaveLength(3);
  });
});

describe('read retries', () => {
  const ok: ScriptedResponse = { status: 200, json: envelope([{ id: 1 }]) };
  it.each([
    ['503', { status: 503, json: { message: 'busy' } }],
    ['408', { status: 408 }],
    ['425', { status: 425 }],
    ['a reset connection', { destroy: true }],
    ['a headers timeout', { stall: 'headers' }],
    ['a body timeout', { stall: 'body' }],
    ['malformed JSON', { status: 200, body: '{"docs": [' }],
  ] as [string, ScriptedResponse][])(
    'retries %s with jittered exponential backoff, warning once with its cause',
    async (_name, fault) => {
      const { up, client, delays, warnings } = await setup([fault, fault, ok]);
      const page = await client.listPage(list, call());
      expect(page.docs).toEqual([{ id: 1 }]);
      expect(up.requests).toHaveLength(3);
      expect(delays).toEqual([125, 250]); // floor 100·2^(n-1), plus random 0.5 × half of it
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({
        attempt: 1,
        delayMs: 125,
        route: '/partners/{version}/{tenant}/series',
        reason: expect.any(String),
      });
    },
  );

  it('throws the last error as upstream-unavailable after the last attempt', async () => {
    const { up, client } = await setup([{ status: 502, json: { errors: [{ message: 'bad gateway' }] } }]);
    const err = await rejection(client.listPage(list, call()));
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err.code).toBe('US_UPSTREAM_UNAVAILABLE');
    expect((err as UpstreamError).upstreamMessage).toBe('bad gateway');
    expect(up.requests).toHaveLength(3);
  });

  it('honours Retry-After in seconds and as an HTTP date', async () => {
    const now = Date.UTC(2026, 2, 1, 12, 0, 0);
    const date = new Date(now + 7000).toUTCString();
    const { client, delays } = await setup(
      [
        { status: 503, headers: { 'retry-after': '3' } },
        { status: 503, headers: { 'retry-after': date } },
        { status: 200, json: envelope([]) },
      ],
      { now: () => now },
    );
    await client.listPage(list, call());
    expect(delays).toEqual([3000, 7000]);
  });

  it.each([400, 404, 422])('does not retry %i', async (status) => {
    const { up, client } = await setup([{ status, json: { error: 'Bad', message: 'nope' } }]);
    const err = await rejection(client.listPage(list, call()));
    expect((err as UpstreamError).status).toBe(status);
    expect((err as UpstreamError).upstreamMessage).toBe('nope');
    expect(up.requests).toHaveLength(1);
  });

  it.each([401, 403])('throws %i at once as US_AUTH, one request made', async (status) => {
    const { up, client, delays } = await setup([
      { status, json: { error: 'Unauthorized', message: 'Valid API key required' } },
    ]);
    const err = await rejection(client.getById('pages', recordId('1'), {}, call()));
    expect(err.code).toBe('US_AUTH');
    expect(up.requests).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  it('never puts the key or the query string in an error', async () => {
    const { client } = await setup([{ status: 400, json: { message: `key ${KEY} is not allowed here` } }]);
    const err = await rejection(client.listPage({ ...list, where: { slug: { equals: 'secret-slug' } } }, call()));
    const text = `${err.message} ${JSON.stringify(err)} ${String(err.stack)}`;
    expect(text).not.toContain(KEY);
    expect(text).not.toContain('secret-slug');
    expect(text).not.toContain('?');
    expect(err.message).toContain('[redacted]');
  });
});

describe('rate limits', () => {
  it('pauses the gate for Retry-After on a 429 and retries without spending an attempt', async () => {
    const rl: ScriptedResponse = { status: 429, headers: { 'retry-after': '2' } };
    const { up, client, pauses, delays } = await setup([
      rl,
      { status: 503 },
      rl,
      { status: 503 },
      { status: 200, json: envelope([]) },
    ]);
    await client.listPage(list, call());
    expect(up.requests).toHaveLength(5);
    expect(pauses).toEqual([2000, 2000]);
    expect(delays).toEqual([125, 250]);
  });

  it('uses RateLimit-Reset on a 429 and stops after a bounded number of waits as US_RATE_LIMITED', async () => {
    const { up, client, pauses } = await setup([
      { status: 429, headers: { 'ratelimit-remaining': '0', 'ratelimit-reset': '5' } },
    ]);
    const err = await rejection(client.listPage(list, call()));
    expect(err.code).toBe('US_RATE_LIMITED');
    expect(up.requests).toHaveLength(4); // the first try plus `attempts` (3) waits
    expect(pauses).toEqual([5000, 5000, 5000]);
  });

  it('leaves pacing to the gate when a success reports RateLimit-Remaining: 0', async () => {
    // The gate spends the same budget in the same rolling window; pausing for the upstream's rounded-up reset
    // would idle every process of the key once the window is full. A 429 still pauses (above).
    const { client, pauses } = await setup([
      { status: 200, json: envelope([]), headers: { 'ratelimit-remaining': '0', 'ratelimit-reset': '4' } },
    ]);
    await client.listPage(list, call());
    expect(pauses).toEqual([]);
  });

  it('retries a write on 429 only', async () => {
    const { up, client, pauses } = await setup([
      { status: 429, headers: { 'retry-after': '1' } },
      { status: 201, json: { id: 1 } },
    ]);
    expect(await client.create('posts', { slug: 'a' }, {}, call())).toEqual({ id: 1 });
    expect(up.requests).toHaveLength(2);
    expect(pauses).toEqual([1000]);
  });
});

describe('writes', () => {
  it('throws a 503 at once, marked answered', async () => {
    const { up, client } = await setup([{ status: 503 }, { status: 201, json: { id: 1 } }]);
    const err = await rejection(client.create('posts', { slug: 'a' }, {}, call()));
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).outcome).toBe('answered');
    expect(up.requests).toHaveLength(1);
  });

  it('throws an unreadable 2xx at once as a bad response, marked answered', async () => {
    const { up, client } = await setup([{ status: 201, body: '<html>' }]);
    const err = await rejection(client.create('forms', { slug: 'f' }, {}, call()));
    expect(err).toBeInstanceOf(BadResponseError);
    expect((err as BadResponseError).outcome).toBe('answered');
    expect(up.requests).toHaveLength(1);
  });

  it('throws a dropped connection at once, marked unknown', async () => {
    const { up, client } = await setup([{ destroy: true }, { status: 200, json: { id: 1 } }]);
    const err = await rejection(client.update('event-instances', recordId('1'), 'PATCH', {}, {}, call()));
    expect((err as UpstreamError).outcome).toBe('unknown');
    expect(err.code).toBe('US_UPSTREAM_UNAVAILABLE');
    expect(up.requests).toHaveLength(1);
  });

  it('retries a refused connection, then throws it marked not-sent', async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    await new Promise<void>((r) => server.close(() => r()));
    const g = recordingGate();
    const delays: number[] = [];
    const client = createHttpPartnersClient({
      dispatcher: testPool(),
      baseUrl: `http://127.0.0.1:${port}`,
      tenant: tenantSlug('acme'),
      apiKey: KEY,
      gate: g.gate,
      retry: { attempts: 3, baseDelayMs: 100 },
      sleep: async (ms) => {
        delays.push(ms);
      },
      random: () => 0.5,
    });
    let attempts = 0;
    const err = await rejection(
      client.delete('event-instances', recordId('1'), { ...call(), onAttempt: () => attempts++ }),
    );
    expect((err as UpstreamError).outcome).toBe('not-sent');
    expect(err.code).toBe('US_UPSTREAM_UNAVAILABLE');
    expect(attempts).toBe(0); // nothing reached the upstream
    expect(delays).toEqual([125, 250]);
  });
});

describe('abort', () => {
  it('aborts a wait between retries', async () => {
    const ac = new AbortController();
    const { up, client } = await setup([{ status: 503 }], {
      sleep: (_ms, signal) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener('abort', () => reject(signal.reason));
          ac.abort();
        }),
    });
    const err = await rejection(client.listPage(list, { signal: ac.signal }));
    expect(err.code).toBe('US_ABORTED');
    expect(up.requests).toHaveLength(1);
  });

  it('aborts a request in flight', async () => {
    const ac = new AbortController();
    const { client } = await setup(() => {
      ac.abort();
      return { stall: 'headers' };
    });
    const err = await rejection(client.listPage(list, { signal: ac.signal }));
    expect(err.code).toBe('US_ABORTED');
  });
});
