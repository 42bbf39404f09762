import { describe, expect, it } from 'vitest';
import { UnderstudyError } from '../../src/errors.js';
import { GateParkedError } from '../../src/partners/gate-parking.js';
import {
  type CollectionJobDecision,
  decideCollectionFailure,
  readCollectionTarget,
} from '../../src/sync/run-collection-job.js';
import { readTenantTarget } from '../../src/sync/run-tenant-job.js';

describe('decideCollectionFailure: each failed sync to its decision', () => {
  const auth = new UnderstudyError('US_AUTH', 'GET /x -> 401');
  const parked = new GateParkedError(5000, 1000, 'read');
  const wrapped = new UnderstudyError('US_ABORTED', 'sync stopped', { cause: parked });
  const other = new Error('boom');
  const cases: [string, unknown, boolean, CollectionJobDecision][] = [
    ['any failure while stopping hands the job back', auth, true, { kind: 'delay', reason: 'hand-back', delayMs: 0 }],
    ['a parked read parks', parked, false, { kind: 'park', error: parked }],
    ['a parked read behind a cause parks', wrapped, false, { kind: 'park', error: wrapped }],
    ['a refused key fails for good', auth, false, { kind: 'fail', message: 'key refused: GET /x -> 401' }],
    ['anything else is retried by the queue', other, false, { kind: 'retry', error: other }],
  ];
  it.each(cases)('%s', (_name, err, stopping, expected) => {
    expect(decideCollectionFailure(err, stopping)).toEqual(expected);
  });
});

describe('reading job data back from Redis', () => {
  it.each([
    [
      { tenant: 'acme', collection: 'series', mode: 'full' },
      { tenant: 'acme', collection: 'series', mode: 'full' },
    ],
    [{ tenant: 'Acme!', collection: 'series', mode: 'full' }, { error: 'job data: tenant must be a tenant slug' }],
    [{ tenant: 'acme', collection: 'series', mode: 'later' }, { error: 'job data: mode must be full or incremental' }],
    [null, { error: 'job data: tenant must be a tenant slug' }],
  ])('collection job %j', (raw, expected) => {
    expect(readCollectionTarget(raw)).toEqual(expected);
  });

  it('names the collections a collection job may have', () => {
    expect(readCollectionTarget({ tenant: 'acme', collection: 'nope', mode: 'full' })).toEqual({
      error: expect.stringMatching(/^job data: collection must be one of .*\bseries\b/),
    });
  });

  it.each([
    [
      { tenant: 'acme', mode: 'incremental' },
      { tenant: 'acme', mode: 'incremental' },
    ],
    [
      { tenant: 'acme', mode: 'full', collections: ['series'] },
      { tenant: 'acme', mode: 'full', collections: ['series'] },
    ],
    [
      { tenant: 'acme', mode: 'full', collections: ['nope'] },
      { error: 'job data: collections must be collection names' },
    ],
    [
      { tenant: 'acme', mode: 'full', collections: 'series' },
      { error: 'job data: collections must be collection names' },
    ],
  ])('tenant job %j', (raw, expected) => {
    expect(readTenantTarget(raw)).toEqual(expected);
  });
});
