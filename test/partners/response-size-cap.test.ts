import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ResponseTooLargeError } from '../../src/errors.js';
import { capResponseSize, DEFAULT_MAX_RESPONSE_BYTES } from '../../src/partners/response-size-cap.js';
import type { Dispatch, Outcome, StreamedAnswer, UpstreamCall } from '../../src/partners/upstream-call.js';

const call: UpstreamCall = {
  method: 'GET',
  route: '/partners/{version}/{tenant}/series',
  path: '/partners/2026-02/acme/series?where=secret',
  auth: true,
  shape: (json) => ({ ok: true, value: json }),
};
const open = () => ({ signal: new AbortController().signal });

/** An inner layer answering `status` with `chunks` as the body; `destroyed()` says whether the cap dropped it. */
function answering(chunks: (string | Error)[], headers: Record<string, string> = {}, status = 200) {
  const body = new Readable({
    read() {
      const next = chunks.shift();
      if (next === undefined) this.push(null);
      else if (next instanceof Error) this.destroy(next);
      else this.push(Buffer.from(next));
    },
  });
  const next: Dispatch<Outcome<StreamedAnswer>> = async () => ({ ok: true, value: { status, headers, body } });
  return { next, destroyed: () => body.destroyed };
}

describe('response size cap', () => {
  it('reads a body under the cap whole', async () => {
    const { next } = answering(['{"docs":', '[]}']);
    const result = await capResponseSize(16)(next)(call, open());
    expect(result).toEqual({ ok: true, value: { status: 200, headers: {}, text: '{"docs":[]}' } });
  });

  it('refuses a body over the cap from its Content-Length, without reading it, never to be retried', async () => {
    const { next, destroyed } = answering(['x'], { 'content-length': '17' });
    const result = await capResponseSize(16)(next)(call, open());
    expect(result).toMatchObject({ ok: false, retry: 'final', status: 200 });
    if (result.ok) return;
    expect(result.error).toBeInstanceOf(ResponseTooLargeError);
    expect(result.error.code).toBe('US_RESPONSE_TOO_LARGE');
    expect(result.error.message).toBe(
      'GET /partners/2026-02/acme/series -> 200: response larger than maxResponseBytes (16 bytes)',
    );
    expect(destroyed()).toBe(true);
  });

  it('stops reading a body without Content-Length as soon as it passes the cap', async () => {
    const { next, destroyed } = answering(['0123456789', '0123456789', 'never read']);
    const result = await capResponseSize(16)(next)(call, open());
    expect(result).toMatchObject({ ok: false, retry: 'final', error: { code: 'US_RESPONSE_TOO_LARGE' } });
    expect(destroyed()).toBe(true);
  });

  it('fails a body that broke off as transient, answered for a 2xx and unknown otherwise', async () => {
    const broken = Object.assign(new Error('reset'), { code: 'ECONNRESET' });
    const ok = await capResponseSize()(answering(['{"do', broken]).next)(call, open());
    expect(ok).toMatchObject({ ok: false, retry: 'transient', status: 200 });
    if (!ok.ok) {
      expect(ok.error.code).toBe('US_UPSTREAM_UNAVAILABLE');
      expect(ok.error.message).toBe('GET /partners/2026-02/acme/series -> 200: body not received (ECONNRESET)');
      expect(ok.error).toMatchObject({ outcome: 'answered' });
    }
    const busy = await capResponseSize()(answering([broken], {}, 503).next)(call, open());
    expect(busy).toMatchObject({ ok: false, retry: 'transient', status: 503, error: { outcome: 'unknown' } });
  });

  it('fails a body cut by the caller stopping as final US_ABORTED', async () => {
    const ac = new AbortController();
    ac.abort();
    const result = await capResponseSize()(answering([new Error('aborted')]).next)(call, { signal: ac.signal });
    expect(result).toMatchObject({ ok: false, retry: 'final', status: 200, error: { code: 'US_ABORTED' } });
  });

  it('passes a failure from inside through, and checks its option up front', async () => {
    const failure = { ok: false, retry: 'transient', status: 0 } as unknown as Outcome<StreamedAnswer>;
    expect(await capResponseSize()(async () => failure)(call, open())).toBe(failure);
    expect(DEFAULT_MAX_RESPONSE_BYTES).toBe(32 * 1024 * 1024);
    expect(() => capResponseSize(-1)).toThrow(/maxResponseBytes must be a number >= 0, got -1/);
  });
});
