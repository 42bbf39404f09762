import { describe, expect, it } from 'vitest';
import { BadResponseError, UpstreamError } from '../../src/errors.js';
import { parseAnswers, upstreamMessage } from '../../src/partners/parse-answer.js';
import type { Outcome, ReadAnswer, Shape, UpstreamCall } from '../../src/partners/upstream-call.js';

const KEY = 'sk_parse_KEY';
const NOW = Date.UTC(2026, 2, 1, 12);
const anything: Shape<unknown> = (json) => ({ ok: true, value: json });
const call = <T>(method: UpstreamCall['method'], shape: Shape<T>): UpstreamCall<T> => ({
  method,
  route: '/partners/{version}/{tenant}/series/{id}',
  path: '/partners/2026-02/acme/series/7?depth=0',
  auth: true,
  shape,
});
const open = () => ({ signal: new AbortController().signal });

/** Parses one answer of `status`, `text` and `headers`, as read by the size cap. */
function parse<T>(c: UpstreamCall<T>, status: number, text: string, headers: Record<string, string> = {}) {
  const read = async (): Promise<Outcome<ReadAnswer>> => ({ ok: true, value: { status, headers, text } });
  return parseAnswers({ secret: KEY, now: () => NOW })(read)(c, open());
}

describe('answer parser', () => {
  it("turns a 2xx's JSON into the call's value through its shape, integers beyond 2^53 exact", async () => {
    expect(await parse(call('GET', anything), 200, '{"id":9007199254740993}')).toEqual({
      ok: true,
      value: { id: 9007199254740993n },
    });
  });

  it("fails a 2xx it cannot use as a retryable bad response: empty for a read, not JSON, or not the route's shape", async () => {
    const empty = await parse(call('GET', anything), 200, ' ');
    expect(empty).toMatchObject({ ok: false, retry: 'transient', status: 200 });
    if (!empty.ok) {
      expect(empty.error).toBeInstanceOf(BadResponseError);
      expect(empty.error.message).toBe('GET /partners/2026-02/acme/series/7: empty body with status 200');
    }
    expect(await parse(call('DELETE', anything), 204, '')).toEqual({ ok: true, value: {} });
    const html = await parse(call('POST', anything), 201, '<html>');
    expect(html).toMatchObject({
      ok: false,
      retry: 'transient',
      error: { code: 'US_BAD_RESPONSE', outcome: 'answered' },
    });
    const shape: Shape<never> = () => ({ ok: false, message: 'expected a JSON object' });
    const wrong = await parse(call('GET', shape), 200, '[]');
    expect(wrong.ok ? '' : wrong.error.message).toBe('GET /partners/2026-02/acme/series/7: expected a JSON object');
  });

  it('classes other statuses: 429 rate, 408, 425 and 5xx transient, the rest final', async () => {
    const classOf = async (status: number) => {
      const r = await parse(call('GET', anything), status, '');
      return r.ok ? 'ok' : r.retry;
    };
    expect(await classOf(429)).toBe('rate');
    for (const s of [408, 425, 500, 503]) expect(await classOf(s)).toBe('transient');
    for (const s of [400, 401, 403, 404, 422]) expect(await classOf(s)).toBe('final');
  });

  it('carries the wait the upstream asked for: Retry-After, else RateLimit-Reset on a 429', async () => {
    const later = new Date(NOW + 7000).toUTCString();
    const dated = await parse(call('GET', anything), 503, '', { 'retry-after': later });
    expect(dated).toMatchObject({ ok: false, hintMs: 7000, error: { retryAfterMs: 7000 } });
    const reset = await parse(call('GET', anything), 429, '', { 'ratelimit-reset': '5', 'ratelimit-remaining': '0' });
    expect(reset).toMatchObject({ ok: false, retry: 'rate', hintMs: 5000, error: { code: 'US_RATE_LIMITED' } });
    const none = await parse(call('GET', anything), 503, '', { 'ratelimit-reset': '5' });
    expect(none).toMatchObject({ ok: false, hintMs: undefined });
  });

  it("names the record and the upstream's words, never the key or the query string", async () => {
    const r = await parse(call('GET', anything), 404, JSON.stringify({ message: `no ${KEY} here` }));
    if (r.ok) throw new Error('expected a failure');
    expect(r.error).toBeInstanceOf(UpstreamError);
    expect(r.error.message).toBe('GET /partners/2026-02/acme/series/7 -> 404: no [redacted] here');
  });

  it("reads the upstream's words from each error shape", () => {
    expect(upstreamMessage({ errors: [{ message: 'a' }, { message: 'b' }] })).toBe('a; b');
    expect(upstreamMessage({ error: 'Bad', message: 'nope' })).toBe('nope');
    expect(upstreamMessage({ error: 'Bad' })).toBe('Bad');
    expect(upstreamMessage({ error: { message: 'deep' } })).toBe('deep');
    expect(upstreamMessage('text')).toBeUndefined();
  });
});
