import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { httpTransport } from '../../src/partners/http-transport.js';
import type { AttemptOptions, UpstreamCall } from '../../src/partners/upstream-call.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';
import { testPool } from '../helpers/http-pool.js';

const KEY = 'sk_test_transport';
const upstreams: FakeUpstream[] = [];
afterEach(async () => {
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
});

const call = (over: Partial<UpstreamCall> = {}): UpstreamCall => ({
  method: 'GET',
  route: '/partners/{version}/{tenant}/series',
  path: '/partners/2026-02/acme/series?limit=1',
  auth: true,
  shape: (json) => ({ ok: true, value: json }),
  ...over,
});

/** Options that record which hooks the transport called, in order. */
function hooks(signal = new AbortController().signal) {
  const told: string[] = [];
  const opts: AttemptOptions = {
    signal,
    onAnswered: () => told.push('answered'),
    onAttempt: () => told.push('attempt'),
    onRateLimited: () => told.push('rate-limited'),
  };
  return { opts, told };
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe('http transport', () => {
  it('sends the key only on routes that need it, and JSON bodies with their content type', async () => {
    const up = await startFakeUpstream([{ status: 200, json: {} }]);
    upstreams.push(up);
    const send = httpTransport({ baseUrl: `${up.url}/`, apiKey: KEY, dispatcher: testPool() });
    await send(call(), hooks().opts);
    await send(call({ auth: false, path: '/partners/2026-02/openapi' }), hooks().opts);
    await send(call({ method: 'POST', body: { big: 2n ** 60n } }), hooks().opts);
    const [read, open, write] = up.requests;
    expect(read?.headers.authorization).toBe(`users API-Key ${KEY}`);
    expect(read?.rawQuery).toBe('limit=1');
    expect(open?.headers.authorization).toBeUndefined();
    expect(write?.headers['content-type']).toBe('application/json');
    expect(write?.body).toBe(`{"big":${2n ** 60n}}`);
  });

  it('answers at the headers, leaving the body to read, and tells of the answer, the attempt and a 429', async () => {
    const up = await startFakeUpstream([{ status: 429, json: { message: 'slow down' } }]);
    upstreams.push(up);
    const send = httpTransport({ baseUrl: up.url, apiKey: KEY, dispatcher: testPool() });
    const { opts, told } = hooks();
    const result = await send(call(), opts);
    if (!result.ok) throw new Error('expected an answer');
    expect(result.value.status).toBe(429);
    let text = '';
    for await (const chunk of result.value.body) text += chunk.toString();
    expect(JSON.parse(text)).toEqual({ message: 'slow down' });
    expect(told).toEqual(['answered', 'attempt', 'rate-limited']);
  });

  it('fails a refused connection as not-sent, retryable even for a write, and counts no attempt', async () => {
    const send = httpTransport({
      baseUrl: `http://127.0.0.1:${await closedPort()}`,
      apiKey: KEY,
      dispatcher: testPool(),
    });
    const { opts, told } = hooks();
    const result = await send(call({ method: 'DELETE' }), opts);
    expect(result).toMatchObject({ ok: false, retry: 'not-sent', status: 0 });
    if (result.ok) return;
    expect(result.error.code).toBe('US_UPSTREAM_UNAVAILABLE');
    expect(result.error.message).toMatch(
      /^DELETE \/partners\/2026-02\/acme\/series -> no response: ECONNREFUSED at 127\.0\.0\.1:/,
    );
    expect(told).toEqual(['answered']);
  });

  it('fails a dropped connection as transient, outcome unknown, and counts the attempt', async () => {
    const up = await startFakeUpstream([{ destroy: true }]);
    upstreams.push(up);
    const send = httpTransport({ baseUrl: up.url, apiKey: KEY, dispatcher: testPool() });
    const { opts, told } = hooks();
    const result = await send(call(), opts);
    expect(result).toMatchObject({ ok: false, retry: 'transient', status: 0, error: { outcome: 'unknown' } });
    expect(told).toEqual(['answered', 'attempt']);
  });

  it('fails a stopped request as final US_ABORTED', async () => {
    const ac = new AbortController();
    const up = await startFakeUpstream(() => {
      ac.abort();
      return { stall: 'headers' };
    });
    upstreams.push(up);
    const send = httpTransport({ baseUrl: up.url, apiKey: KEY, dispatcher: testPool() });
    const result = await send(call(), hooks(ac.signal).opts);
    expect(result).toMatchObject({ ok: false, retry: 'final', error: { code: 'US_ABORTED', outcome: 'unknown' } });
  });

  it('checks its options up front', () => {
    const dispatcher = testPool();
    expect(() => httpTransport({ baseUrl: 'ftp://x', apiKey: KEY, dispatcher })).toThrow(/baseUrl must be an http/);
    expect(() => httpTransport({ baseUrl: 'http://x', apiKey: 'a\nb', dispatcher })).toThrow(/apiKey must be/);
    const noPool = { baseUrl: 'http://x', apiKey: KEY } as unknown as Parameters<typeof httpTransport>[0];
    expect(() => httpTransport(noPool)).toThrow(/dispatcher is required/);
    expect(() => httpTransport({ baseUrl: 'http://x', apiKey: KEY, dispatcher, timeouts: { bodyMs: -1 } })).toThrow(
      /timeouts.bodyMs must be a number >= 0/,
    );
  });
});
