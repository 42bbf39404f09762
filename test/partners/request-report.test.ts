import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/errors.js';
import { reportRequests } from '../../src/partners/request-report.js';
import type { Dispatch, Outcome, UpstreamCall } from '../../src/partners/upstream-call.js';

const call: UpstreamCall = {
  method: 'PATCH',
  route: '/partners/{version}/{tenant}/series/{id}',
  path: '/partners/2026-02/acme/series/7?draft=true',
  auth: true,
  shape: (json) => ({ ok: true, value: json }),
};
const open = () => ({ signal: new AbortController().signal });

describe('request report', () => {
  it('tells of every attempt with its route template and status, 0 when no answer came', async () => {
    const seen: unknown[] = [];
    const report = reportRequests((e) => seen.push({ ...e, ms: typeof e.ms }));
    const answered: Dispatch<Outcome<{ status: number }>> = async () => ({ ok: true, value: { status: 200 } });
    const lost: Dispatch<Outcome<{ status: number }>> = async () => ({
      ok: false,
      error: new UpstreamError('PATCH', call.route, 0),
      retry: 'transient',
      status: 0,
    });
    await report(answered)(call, open());
    await report(lost)(call, open());
    expect(seen).toEqual([
      { method: 'PATCH', route: '/partners/{version}/{tenant}/series/{id}', status: 200, ms: 'number' },
      { method: 'PATCH', route: '/partners/{version}/{tenant}/series/{id}', status: 0, ms: 'number' },
    ]);
  });

  it('is the layer inside it when nobody listens', () => {
    const inner: Dispatch<Outcome<{ status: number }>> = async () => ({ ok: true, value: { status: 200 } });
    expect(reportRequests(undefined)(inner)).toBe(inner);
  });
});
