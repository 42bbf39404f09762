import { describe, expect, it } from 'vitest';
import { BadResponseError, UnderstudyError, UpstreamError } from '../../src/errors.js';
import { GateParkedError } from '../../src/partners/gate-parking.js';
import { classifyFailure, type FailureClass } from '../../src/writes/classify-failure.js';
import { decideWriteRetry, type FailedAttempt, type WriteRetryPolicy } from '../../src/writes/decide-write-retry.js';

const policy: WriteRetryPolicy = { attempts: 3, maxRateLimitWaitMs: 10_000, backoff: { baseMs: 1000, maxMs: 60_000 } };
const half = () => 0.5;
const at = (o: Partial<FailedAttempt> = {}): FailedAttempt => ({
  attempt: 1,
  priorUnknown: false,
  rateWaitMs: 0,
  elapsedMs: 100,
  createWithoutNaturalKey: false,
  ...o,
});
const put = (status: number, o: { retryAfterMs?: number; outcome?: 'unknown' } = {}) =>
  new UpstreamError('PATCH', '/partners/{version}/{tenant}/series/{id}', status, undefined, o);

describe('classifyFailure: each error to its retry class', () => {
  const cases: [string, unknown, FailureClass][] = [
    ['429 with Retry-After', put(429, { retryAfterMs: 3000 }), { kind: 'rate', waitMs: 3000, parked: false }],
    ['429 without Retry-After', put(429), { kind: 'rate', waitMs: 1000, parked: false }],
    ['the key budget parked', new GateParkedError(5000, 1000), { kind: 'rate', waitMs: 1000, parked: true }],
    ['a stop before sending', new UnderstudyError('US_ABORTED', 'stop'), { kind: 'aborted', unknownOutcome: false }],
    [
      'a stop with the request out',
      put(0, { outcome: 'unknown' }),
      expect.objectContaining({ kind: 'retry', unknownOutcome: true, status: null }),
    ],
    ['503', put(503), expect.objectContaining({ kind: 'retry', unknownOutcome: true, status: 503 })],
    ['408', put(408), expect.objectContaining({ kind: 'retry', unknownOutcome: false, status: 408 })],
    ['a 2xx cut off', put(200), expect.objectContaining({ kind: 'retry', unknownOutcome: true, status: 200 })],
    ['422', put(422), expect.objectContaining({ kind: 'final', status: 422 })],
    [
      'a 2xx body that does not parse',
      new BadResponseError('POST', '/x', 'not JSON'),
      expect.objectContaining({ kind: 'retry', unknownOutcome: true, code: 'US_BAD_RESPONSE' }),
    ],
    [
      'a store error',
      new UnderstudyError('US_STORE', 'disk'),
      expect.objectContaining({ kind: 'retry', unknownOutcome: false, code: 'US_STORE' }),
    ],
    [
      'a config error',
      new UnderstudyError('US_CONFIG', 'no'),
      expect.objectContaining({ kind: 'final', code: 'US_CONFIG' }),
    ],
    [
      'anything else',
      new Error('boom'),
      expect.objectContaining({ kind: 'retry', code: 'US_INTERNAL', message: 'boom' }),
    ],
  ];
  it.each(cases)('%s', (_name, err, expected) => {
    expect(classifyFailure(err)).toEqual(expected);
  });

  it('a stop whose request may have gone out says so', () => {
    const err = new UpstreamError('POST', '/x', 0, undefined, { code: 'US_ABORTED', outcome: 'unknown' });
    expect(classifyFailure(err)).toEqual({ kind: 'aborted', unknownOutcome: true });
  });
});

describe('decideWriteRetry: each failed attempt to its decision', () => {
  const retry = (o: Partial<Extract<FailureClass, { kind: 'retry' }>> = {}): FailureClass => ({
    kind: 'retry',
    unknownOutcome: false,
    status: 503,
    message: 'PATCH /x -> 503',
    code: 'US_UPSTREAM',
    ...o,
  });
  const cases: [string, FailureClass, FailedAttempt, ReturnType<typeof decideWriteRetry>][] = [
    [
      'a stop before sending hands back without counting the attempt',
      { kind: 'aborted', unknownOutcome: false },
      at({ attempt: 2 }),
      { kind: 'hand-back', progress: { attempts: 1, unknownOutcome: false, sending: false, rateWaitMs: 0 } },
    ],
    [
      'a stop with the request out counts it and remembers the unknown outcome',
      { kind: 'aborted', unknownOutcome: true },
      at({ attempt: 2 }),
      { kind: 'hand-back', progress: { attempts: 2, unknownOutcome: true, sending: false, rateWaitMs: 0 } },
    ],
    [
      'parking waits for the key budget: no attempt spent, no 429 time counted',
      { kind: 'rate', waitMs: 1000, parked: true },
      at({ rateWaitMs: 500 }),
      {
        kind: 'park',
        delayMs: 1000,
        progress: { attempts: 0, unknownOutcome: false, sending: false, rateWaitMs: 500 },
      },
    ],
    [
      'a 429 waits Retry-After and counts the attempt time and the wait',
      { kind: 'rate', waitMs: 2000, parked: false },
      at({ rateWaitMs: 500, elapsedMs: 100 }),
      {
        kind: 'wait-rate',
        delayMs: 2000,
        progress: { attempts: 0, unknownOutcome: false, sending: false, rateWaitMs: 2600 },
      },
    ],
    [
      'a 429 past maxRateLimitWaitMs fails',
      { kind: 'rate', waitMs: 5000, parked: false },
      at({ rateWaitMs: 5000, elapsedMs: 100 }),
      {
        kind: 'fail-final',
        progress: { attempts: 0, unknownOutcome: false, sending: false, rateWaitMs: 5100 },
        status: 429,
        code: 'US_RATE_LIMITED',
        message:
          'rate limited: still 429 after 5100 ms of waiting, and the upstream asks for 5000 ms more, past ' +
          'writes.maxRateLimitWaitMs (10000 ms)',
      },
    ],
    [
      'a transient failure backs off with jitter below base * 2^(n-1)',
      retry({ unknownOutcome: false, status: 408 }),
      at({ attempt: 2 }),
      {
        kind: 'retry-after',
        delayMs: 1000,
        progress: { attempts: 2, unknownOutcome: false, sending: false, rateWaitMs: 0 },
        status: 408,
        code: 'US_UPSTREAM',
        message: 'PATCH /x -> 503',
      },
    ],
    [
      'a transient failure on the last attempt gives up',
      retry(),
      at({ attempt: 3 }),
      {
        kind: 'fail-final',
        progress: { attempts: 3, unknownOutcome: false, sending: false, rateWaitMs: 0 },
        status: 503,
        code: 'US_UPSTREAM',
        message: 'gave up after 3 attempt(s): PATCH /x -> 503',
      },
    ],
    [
      'a create that may have been applied and has no natural key is not sent again',
      retry({ unknownOutcome: true }),
      at({ createWithoutNaturalKey: true }),
      {
        kind: 'fail-unknown-outcome',
        progress: { attempts: 1, unknownOutcome: true, sending: false, rateWaitMs: 0 },
        status: 503,
        what: 'attempt 1 (PATCH /x -> 503)',
      },
    ],
    [
      'an earlier unknown outcome stops a create without natural key too',
      retry({ unknownOutcome: false, status: 408 }),
      at({ attempt: 2, priorUnknown: true, createWithoutNaturalKey: true }),
      {
        kind: 'fail-unknown-outcome',
        progress: { attempts: 2, unknownOutcome: true, sending: false, rateWaitMs: 0 },
        status: 408,
        what: 'attempt 2 (PATCH /x -> 503)',
      },
    ],
    [
      'a write with a natural key retries after an unknown outcome (it is looked up first)',
      retry({ unknownOutcome: true }),
      at(),
      {
        kind: 'retry-after',
        delayMs: 500,
        progress: { attempts: 1, unknownOutcome: true, sending: false, rateWaitMs: 0 },
        status: 503,
        code: 'US_UPSTREAM',
        message: 'PATCH /x -> 503',
      },
    ],
    [
      'a final answer fails at once, keeping what is known of earlier attempts',
      { kind: 'final', status: 422, message: 'PATCH /x -> 422: invalid', code: 'US_UPSTREAM' },
      at({ attempt: 2, priorUnknown: true, rateWaitMs: 40 }),
      {
        kind: 'fail-final',
        progress: { attempts: 2, unknownOutcome: true, sending: false, rateWaitMs: 40 },
        status: 422,
        code: 'US_UPSTREAM',
        message: 'PATCH /x -> 422: invalid',
      },
    ],
  ];
  it.each(cases)('%s', (_name, cls, attempt, expected) => {
    expect(decideWriteRetry(cls, attempt, policy, half)).toEqual(expected);
  });

  it('has no bound on 429 waits when maxRateLimitWaitMs is not set', () => {
    const d = decideWriteRetry(
      { kind: 'rate', waitMs: 60_000, parked: false },
      at({ rateWaitMs: 1e9 }),
      { attempts: 3, backoff: policy.backoff },
      half,
    );
    expect(d.kind).toBe('wait-rate');
  });

  it('caps the backoff at maxMs', () => {
    const d = decideWriteRetry(
      retry(),
      at({ attempt: 2 }),
      { ...policy, attempts: 99, backoff: { baseMs: 1000, maxMs: 1500 } },
      () => 0.999,
    );
    expect(d).toMatchObject({ kind: 'retry-after', delayMs: 1498 });
  });
});
