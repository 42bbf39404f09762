import { type Job, UnrecoverableError } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { syncTenantProcessor } from '../../jobs/sync-tenant.js';
import { UnderstudyError } from '../../src/errors.js';
import type { SyncQueue } from '../../src/queue/queues.js';
import { silentLog } from '../helpers/sync-harness.js';

/** The queue is never reached on these paths: every one fails before fanning out. */
const queue = {} as SyncQueue;
const job = (data: unknown) => ({ id: 't-1', data }) as unknown as Job;

describe('syncTenantProcessor: final failures to UnrecoverableError', () => {
  const cases: [string, unknown, () => Promise<null>, RegExp][] = [
    [
      'unreadable job data',
      { tenant: 'acme', mode: 'sometimes' },
      async () => null,
      /mode must be full or incremental/,
    ],
    [
      'a tenant no longer configured',
      { tenant: 'acme', mode: 'full' },
      async () => null,
      /"acme" is not in the config/,
    ],
    [
      'a key refused during route discovery',
      { tenant: 'acme', mode: 'full' },
      async () => {
        throw new UnderstudyError('US_AUTH', 'GET /x -> 401');
      },
      /^key refused: GET \/x -> 401/,
    ],
  ];
  it.each(cases)('%s', async (_name, data, collectionsOf, message) => {
    const run = syncTenantProcessor({ queue, collectionsOf, log: silentLog })(job(data));
    await expect(run).rejects.toBeInstanceOf(UnrecoverableError);
    await expect(run).rejects.toThrow(message);
  });

  it('leaves any other error of route discovery to the queue retries', async () => {
    const boom = new UnderstudyError('US_UPSTREAM_UNAVAILABLE', 'down');
    const run = syncTenantProcessor({
      queue,
      collectionsOf: async () => {
        throw boom;
      },
      log: silentLog,
    })(job({ tenant: 'acme', mode: 'full' }));
    await expect(run).rejects.toBe(boom);
  });
});
