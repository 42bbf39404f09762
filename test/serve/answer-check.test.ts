import { describe, expect, it } from 'vitest';
import type { Change } from '../../src/changes/change-log-port.js';
import type { AcceptedWrite, Problem, ServeWriteDetails } from '../../src/serve/serve-schemas.js';
import { envelope } from '../helpers/fake-upstream.js';
import { checkAnswer, findOperation } from './answer-check.js';

const P = '/partners/2026-02/acme';
const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };
const PROBLEM_TYPE = { 'content-type': 'application/problem+json' };

const accepted = (over: Partial<AcceptedWrite> = {}): AcceptedWrite => ({
  id: 'idem-1',
  state: 'queued',
  links: { self: '/v1/writes/idem-1' },
  ...over,
});
const problem = (over: Partial<Problem> = {}): Problem => ({
  type: 'about:blank',
  title: 'Not Found',
  status: 404,
  detail: 'no write job idem-9',
  code: 'US_NOT_FOUND',
  ...over,
});
const change = (over: Partial<Change> = {}): Change => ({
  seq: 7,
  tenant: 'acme',
  collection: 'event-instances',
  id: '42',
  variant: 'published',
  kind: 'update',
  updated_at_before: '2026-03-01T00:00:00.000Z',
  updated_at_after: '2026-03-02T00:00:00.000Z',
  fields: ['title'],
  source: 'write',
  run_id: 'idem-1',
  at: '2026-03-02T00:00:01.000Z',
  reason: null,
  ...over,
});
const details = (): ServeWriteDetails => ({
  record: null,
  jobId: 'idem-1',
  state: 'failed',
  done: true,
  op: 'update',
  tenant: 'acme',
  collection: 'event-instances',
  recordId: '42',
  resultId: null,
  note: null,
  attempts: 3,
  error: { code: 'US_UPSTREAM', status: 502, message: 'PATCH … -> 502' },
  failures: null,
  summary: null,
  enqueuedAt: '2026-03-02T00:00:00.000Z',
  finishedAt: '2026-03-02T00:00:09.000Z',
  queueState: 'failed',
  data: { op: 'update' },
  progress: null,
  failedReason: 'upstream 502',
  result: null,
  log: null,
  tokenName: 'box-office',
});

describe('findOperation', () => {
  it('finds the templated path of a concrete one, a literal segment before a template', () => {
    expect(findOperation('PATCH', `${P}/event-instances/42?draft=true`).template).toBe(
      '/partners/2026-02/{tenant}/event-instances/{id}',
    );
    expect(findOperation('PATCH', `${P}/organizations/custom-attributes`).template).toBe(
      '/partners/2026-02/{tenant}/organizations/custom-attributes',
    );
    expect(findOperation('GET', `${P}/organizations/custom-attributes`).template).toBe(
      '/partners/2026-02/{tenant}/organizations/{id}',
    );
  });

  it('names a path the document lacks, and a method its path lacks', () => {
    expect(() => findOperation('GET', '/v2/writes')).toThrow('no path of the document matches /v2/writes');
    expect(() => findOperation('PUT', `${P}/event-instances/42`)).toThrow(/has no PUT \(it has PATCH, DELETE, GET\)/);
  });
});

describe('checkAnswer', () => {
  it('takes a queued write with its Location, as an object or as JSON text', () => {
    const headers = { ...JSON_TYPE, location: '/v1/writes/idem-1' };
    expect(checkAnswer('PATCH', `${P}/event-instances/42`, 202, headers, accepted())).toBe(
      '/partners/2026-02/{tenant}/event-instances/{id}',
    );
    checkAnswer('POST', `${P}/series`, 202, new Headers(headers), JSON.stringify(accepted()));
  });

  it('refuses a queued write without Location, or with a state that is not one', () => {
    expect(() => checkAnswer('POST', `${P}/series`, 202, JSON_TYPE, accepted())).toThrow(
      'the Location header is missing',
    );
    const headers = { ...JSON_TYPE, location: '/v1/writes/idem-1' };
    const bad = { ...accepted(), state: 'done' };
    expect(() => checkAnswer('POST', `${P}/series`, 202, headers, bad)).toThrow(
      /POST \/partners\/2026-02\/acme\/series → 202 .*body\/state must be equal to one of the allowed values/,
    );
  });

  it("takes the upstream's record under Prefer: wait, and a created one as 201", () => {
    checkAnswer('PATCH', `${P}/event-instances/42`, 200, JSON_TYPE, { id: '42', title: 'Matinee' });
    checkAnswer('POST', `${P}/series`, 201, JSON_TYPE, { id: '7', title: 'Autumn', slug: 'autumn' });
    expect(() => checkAnswer('PATCH', `${P}/event-instances/42`, 200, JSON_TYPE, ['not', 'a record'])).toThrow(
      /body must be object/,
    );
  });

  it('takes a problem, and refuses one with a code that is not US_*, or an error that is not problem+json', () => {
    checkAnswer('GET', '/v1/writes/idem-9', 404, PROBLEM_TYPE, problem());
    expect(() => checkAnswer('GET', '/v1/writes/idem-9', 404, PROBLEM_TYPE, problem({ code: 'NOT_FOUND' }))).toThrow(
      /body\/code must match pattern/,
    );
    expect(() => checkAnswer('GET', '/v1/writes/idem-9', 404, JSON_TYPE, problem())).toThrow(
      'content type "application/json" is not one of application/problem+json',
    );
    expect(() =>
      checkAnswer('GET', '/v1/writes/idem-9', 401, PROBLEM_TYPE, problem({ status: 401, code: 'US_AUTH' })),
    ).toThrow('the WWW-Authenticate header is missing');
  });

  it('refuses a status the route does not answer', () => {
    expect(() => checkAnswer('GET', '/v1/changes', 418, JSON_TYPE, [])).toThrow(/has no 418 answer \(200, 400/);
  });

  it('checks a write, failed writes, changes and the event stream against their schemas', () => {
    checkAnswer('GET', '/v1/writes/idem-1?wait=30s', 200, JSON_TYPE, details());
    expect(() => checkAnswer('GET', '/v1/writes/idem-1', 200, JSON_TYPE, { ...details(), tokenName: 3 })).toThrow(
      /body\/tokenName must be string/,
    );
    checkAnswer('GET', '/v1/changes?since=6', 200, JSON_TYPE, [
      change(),
      change({ seq: 8, kind: 'delete', reason: 'deleted' }),
    ]);
    expect(() =>
      checkAnswer('GET', '/v1/changes', 200, JSON_TYPE, [change({ kind: 'moved' as Change['kind'] })]),
    ).toThrow(/body\/0\/kind must be equal to one of the allowed values/);
    checkAnswer('GET', '/v1/changes/stream', 200, { 'content-type': 'text/event-stream' }, `id: 7\ndata: {}\n\n`);
  });

  it("checks reads against the simulator's envelope and records, and takes a 304 without a body", () => {
    checkAnswer('GET', `${P}/event-instances?limit=10`, 200, JSON_TYPE, envelope([{ id: '42' }]));
    const { totalDocs: _t, ...noTotal } = envelope([]);
    expect(() => checkAnswer('GET', `${P}/venues`, 200, JSON_TYPE, noTotal)).toThrow(
      /must have required property 'totalDocs'/,
    );
    checkAnswer('GET', `${P}/media/poster.png`, 304, {}, undefined);
    checkAnswer('GET', `${P}/media`, 400, JSON_TYPE, { errors: [{ message: 'bad where' }] });
  });
});
