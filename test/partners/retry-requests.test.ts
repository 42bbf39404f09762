import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/errors.js';
import { failureSpell } from '../../src/failure-spell.js';
import { networkCause } from '../../src/partners/network-cause.js';
import { retryPolicy, retryRequests } from '../../src/partners/retry-requests.js';
import type { Decode, Failure, Outcome, UpstreamCall } from '../../src/partners/upstream-call.js';

const call = (method: UpstreamCall['method']): UpstreamCall<string> => ({
  method,
  route: '/partners/{version}/{tenant}/series',
  path: '/partners/2026-02/acme/series',
  auth: true,
  shape: () => ({ ok: true, value: 'never used here' }),
});
const open = () => ({ signal: new AbortController().signal });
const fail = (retry: Failure['retry'], status: number, hintMs?: number): Failure => ({
  ok: false,
  error: new UpstreamError('GET', '/partners/{version}/{tenant}/series', status),
  retry,
  status,
  hintMs,
});

/** A connection refused at `where`, as the transport reports it (src/partners/http-transport.ts). */
const refusedAt = (where: string): Failure => ({
  ok: false,
  error: new UpstreamError(
    'GET',
    '/partners/{version}/{tenant}/series',
    0,
    networkCause('ECONNREFUSED', `http://${where}`),
  ),
  retry: 'not-sent',
  status: 0,
});

/** An inner layer answering with `script` in turn (the last repeats); `sent()` counts its attempts. */
function scripted(script: Outcome<string>[]) {
  let n = 0;
  const next = (async () => script[Math.min(n++, script.length - 1)]) as unknown as Decode;
  return { next, sent: () => n };
}

/** The retry layer with waits recorded instead of slept, jitter at its middle, and its log lines kept by level. */
function retrying(over: Partial<Parameters<typeof retryRequests>[0]> = {}) {
  const sleeps: number[] = [];
  const pauses: number[] = [];
  const warnings: unknown[] = [];
  const lines: { level: string; obj: unknown; msg: string }[] = [];
  const keep = (level: string) => (obj: unknown, msg: string) => {
    lines.push({ level, obj, msg });
    if (level === 'warn') warnings.push(obj);
  };
  const layer = retryRequests({
    attempts: 3,
    baseDelayMs: 100,
    maxDelayMs: 10_000,
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    pauseKey: async (ms) => {
      pauses.push(ms);
    },
    log: { warn: keep('warn'), debug: keep('debug'), info: keep('info') } as never,
    ...over,
  });
  return { layer, sleeps, pauses, warnings, lines };
}

describe('retry layer', () => {
  it('retries a transient read with the growing floor, warning once for the same cause, and returns the value', async () => {
    const { layer, sleeps, lines } = retrying();
    const { next, sent } = scripted([fail('transient', 503), fail('transient', 503), { ok: true, value: 'page' }]);
    expect(await layer(next)(call('GET'), open())).toBe('page');
    expect(sent()).toBe(3);
    expect(sleeps).toEqual([125, 250]);
    const route = '/partners/{version}/{tenant}/series';
    expect(lines).toEqual([
      {
        level: 'warn',
        obj: { attempt: 1, delayMs: 125, status: 503, route, reason: 'HTTP 503' },
        msg: 'retrying upstream request',
      },
      {
        level: 'debug',
        obj: { attempt: 2, delayMs: 250, status: 503, route, reason: 'HTTP 503' },
        msg: 'retrying upstream request',
      },
      {
        level: 'info',
        obj: { route, failures: 2, ms: expect.any(Number), reason: 'HTTP 503' },
        msg: 'upstream requests work again',
      },
    ]);
  });

  it('throws the last failure after the last attempt', async () => {
    const { layer } = retrying();
    const last = fail('transient', 502);
    const { next, sent } = scripted([fail('transient', 503), fail('transient', 504), last]);
    await expect(layer(next)(call('GET'), open())).rejects.toBe(last.error);
    expect(sent()).toBe(3);
  });

  it('never retries a transient write or a final failure, but retries a write refused before it was sent', async () => {
    const { layer, sleeps } = retrying();
    const once = scripted([fail('transient', 503), { ok: true, value: 'x' }]);
    await expect(layer(once.next)(call('POST'), open())).rejects.toMatchObject({ status: 503 });
    expect(once.sent()).toBe(1);
    const final = scripted([fail('final', 404)]);
    await expect(layer(final.next)(call('GET'), open())).rejects.toMatchObject({ status: 404 });
    expect(final.sent()).toBe(1);
    const refused = scripted([fail('not-sent', 0), { ok: true, value: 'created' }]);
    expect(await layer(refused.next)(call('POST'), open())).toBe('created');
    expect(sleeps).toEqual([125]);
  });

  it('pauses the whole key on a 429 for what the upstream asked, apart from the attempts', async () => {
    const { layer, pauses, sleeps } = retrying();
    const rate = fail('rate', 429, 2000);
    const { next, sent } = scripted([
      rate,
      fail('transient', 503),
      rate,
      fail('transient', 503),
      { ok: true, value: 'ok' },
    ]);
    expect(await layer(next)(call('GET'), open())).toBe('ok');
    expect(sent()).toBe(5);
    expect(pauses).toEqual([2000, 2000]);
    expect(sleeps).toEqual([125, 250]);
  });

  it('stops waiting when the caller stops: US_ABORTED, not sent again', async () => {
    const ac = new AbortController();
    const { layer } = retrying({
      sleep: (_ms, signal) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener('abort', () => reject(signal.reason));
          ac.abort();
        }),
    });
    const { next, sent } = scripted([fail('transient', 503)]);
    await expect(layer(next)(call('GET'), { signal: ac.signal })).rejects.toMatchObject({
      code: 'US_ABORTED',
      outcome: 'not-sent',
    });
    expect(sent()).toBe(1);
  });

  it('says a spell of failures on a key once, shared by the clients of the key: its cause, a new cause, its end', async () => {
    let now = 0;
    const spell = failureSpell(() => now);
    const a = retrying({ spell, attempts: 4 });
    const b = retrying({ spell, attempts: 4 });
    const refused = refusedAt('127.0.0.1:38777');
    // Tenant A's read meets the outage; B's two reads of the same key meet it too, then a 502 once it answers.
    await expect(a.layer(scripted([refused]).next)(call('GET'), open())).rejects.toMatchObject({ status: 0 });
    now = 20_000;
    const bNext = scripted([refused, refused, fail('transient', 502), fail('final', 404), { ok: true, value: 'page' }]);
    await expect(b.layer(bNext.next)(call('GET'), open())).rejects.toMatchObject({ status: 404 });
    now = 40_000;
    expect(await b.layer(bNext.next)(call('GET'), open())).toBe('page');
    const said = [...a.lines, ...b.lines].filter((l) => l.level !== 'debug');
    const cause = 'ECONNREFUSED at 127.0.0.1:38777: connection refused (nothing listens there)';
    expect(said).toEqual([
      { level: 'warn', obj: expect.objectContaining({ status: 0, reason: cause }), msg: 'retrying upstream request' },
      {
        level: 'warn',
        obj: expect.objectContaining({ status: 502, reason: 'HTTP 502', previousReason: cause, failuresBefore: 6 }),
        msg: 'retrying upstream request',
      },
      // 4 + 2 refused, one 502; the 404 was an answer of its own, neither a failure of the spell nor its end.
      {
        level: 'info',
        obj: expect.objectContaining({ failures: 7, ms: 40_000, reason: 'HTTP 502' }),
        msg: 'upstream requests work again',
      },
    ]);
    // The last attempt of A's read was not retried: counted and thrown, not said again.
    expect(a.lines.map((l) => l.level)).toEqual(['warn', 'debug', 'debug', 'debug']);
    expect(a.lines[3]?.msg).toBe('upstream request failed');
  });

  it('checks its timing up front, with the production defaults', () => {
    expect(retryPolicy()).toEqual({ attempts: 5, baseDelayMs: 250, maxDelayMs: 30_000 });
    expect(() => retryPolicy({ attempts: -1 })).toThrow(/retry.attempts must be a number >= 0, got -1/);
    expect(() => retryPolicy({ baseDelayMs: Number.NaN })).toThrow(/retry.baseDelayMs/);
  });
});
