import { describe, expect, it } from 'vitest';
import {
  BadResponseError,
  codeOf,
  hasCode,
  isStop,
  isUpstreamError,
  ResponseTooLargeError,
  UnderstudyError,
  UpstreamError,
} from '../src/errors.js';
import { GateParkedError, isGateParked } from '../src/partners/gate-parking.js';
import { WrongBaseUrlError } from '../src/sync/discover-routes.js';

describe('branching on codes (src/errors.ts)', () => {
  it('tells a code apart whatever the class, and nothing of a foreign error', () => {
    const notFound = new UpstreamError('GET', '/x/{id}', 404);
    expect(hasCode(notFound, 'US_NOT_FOUND')).toBe(true);
    expect(hasCode(new UnderstudyError('US_NOT_FOUND', 'no job'), 'US_NOT_FOUND')).toBe(true);
    expect(hasCode(notFound, 'US_AUTH')).toBe(false);
    expect(hasCode(Object.assign(new Error('raw'), { code: 'US_NOT_FOUND' }), 'US_NOT_FOUND')).toBe(false);
    expect(codeOf(new TypeError('x'))).toBeUndefined();
    expect(codeOf(new WrongBaseUrlError(new UpstreamError('GET', '/api', 403)))).toBe('US_WRONG_BASE_URL');
  });

  it('counts a shutdown and a parked wait as stops, and nothing else', () => {
    expect(isStop(new UnderstudyError('US_ABORTED', 'stopped'))).toBe(true);
    const parked = new GateParkedError(5000, 1000, 'read');
    expect([isStop(parked), isGateParked(parked), parked.code]).toEqual([true, true, 'US_GATE_PARKED']);
    expect(isGateParked(new UnderstudyError('US_ABORTED', 'stopped'))).toBe(false);
    expect(isStop(new UpstreamError('GET', '/x', 503))).toBe(false);
  });

  it("reads an upstream answer's status by its code, not from other errors that carry one", () => {
    const silent = new UpstreamError('GET', '/x', 0);
    expect(isUpstreamError(silent) && silent.status).toBe(0);
    expect(isUpstreamError(new UpstreamError('GET', '/x', 0, 'aborted', { code: 'US_ABORTED' }))).toBe(true);
    expect(isUpstreamError(new ResponseTooLargeError('GET', '/x', 200, 10))).toBe(false);
    expect(isUpstreamError(new BadResponseError('GET', '/x', 'not JSON'))).toBe(false);
    expect(isUpstreamError(new UnderstudyError('US_UPSTREAM', 'incremental sync failed'))).toBe(false);
  });
});
