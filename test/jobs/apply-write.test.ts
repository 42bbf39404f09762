import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import { describe, expect, it, vi } from 'vitest';
import { applyWriteProcessor, type WriteProcessorDeps } from '../../jobs/apply-write.js';
import { UpstreamError } from '../../src/errors.js';
import type { PartnersClient } from '../../src/partners/partners-client.js';
import type { Store } from '../../src/sync/store-port.js';
import type { WriteLog, WriteLogEntry } from '../../src/writes/write-log.js';
import { silentLog } from '../helpers/sync-harness.js';

const NOW = Date.parse('2026-03-01T00:00:00Z');

/** A BullMQ job as far as the processor touches it. */
function fakeJob(data: unknown) {
  const job = {
    id: 'job-1',
    timestamp: NOW - 5000,
    data,
    progress: 0 as unknown,
    moveToDelayed: vi.fn(async (_at: number, _token?: string) => {}),
    updateProgress: vi.fn(async (p: unknown) => {
      job.progress = p;
    }),
  };
  return job;
}

function deps(client: Partial<PartnersClient>): WriteProcessorDeps {
  const rows = new Map<string, WriteLogEntry>();
  const writeLog: WriteLog = {
    record: async (e) => void rows.set(e.jobId, e),
    get: async (id) => rows.get(id) ?? null,
    list: async () => [...rows.values()],
    close: async () => {},
  };
  return {
    tenantFor: () => ({ client: { tenant: 'acme', ...client } as unknown as PartnersClient, mirrorDrafts: false }),
    store: {
      write: async () => ({ changes: [], inserted: 0, updated: 0, revived: 0, deleted: 1, unchanged: 0 }),
    } as unknown as Store,
    writeLog,
    order: { turn: async () => ({ first: true }), leave: async () => null },
    promote: async () => {},
    afterBulk: async () => {},
    attempts: 3,
    backoff: { baseMs: 1000, maxMs: 60_000 },
    orderRecheckMs: 2000,
    stopping: new AbortController().signal,
    log: silentLog,
    random: () => 0.5,
    now: () => NOW,
  };
}

const del = { op: 'delete', tenant: 'acme', collection: 'event-instances', id: 'e1' };
const refuse = (status: number, retryAfterMs?: number) => async () => {
  throw new UpstreamError('DELETE', '/partners/{version}/{tenant}/event-instances/{id}', status, 'no', {
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
};

describe('applyWriteProcessor: each decision of runWrite to BullMQ', () => {
  it('returns the result of a completed write as the job return value', async () => {
    const job = fakeJob(del);
    const result = await applyWriteProcessor(deps({ delete: async () => ({ id: 'e1' }) }))(
      job as unknown as Job,
      'tok',
    );
    expect(result).toEqual({ status: 'ok', resultId: 'e1', attempts: 1 });
    expect(job.moveToDelayed).not.toHaveBeenCalled();
  });

  it('moves a job to delayed and throws DelayedError for a delay, with the worker token', async () => {
    const job = fakeJob(del);
    const run = applyWriteProcessor(deps({ delete: refuse(429, 3000) }))(job as unknown as Job, 'tok');
    await expect(run).rejects.toBeInstanceOf(DelayedError);
    expect(job.moveToDelayed).toHaveBeenCalledWith(NOW + 3000, 'tok');
    expect(job.progress).toEqual({ attempts: 0, unknownOutcome: false, sending: false, rateWaitMs: 3000 });
  });

  it('throws UnrecoverableError for a final failure', async () => {
    const job = fakeJob(del);
    const run = applyWriteProcessor(deps({ delete: refuse(422) }))(job as unknown as Job, 'tok');
    await expect(run).rejects.toBeInstanceOf(UnrecoverableError);
    await expect(run).rejects.toThrow('-> 422: no');
    expect(job.moveToDelayed).not.toHaveBeenCalled();
  });

  it('throws UnrecoverableError for job data it cannot read', async () => {
    const run = applyWriteProcessor(deps({}))(fakeJob({ op: 'nope' }) as unknown as Job);
    await expect(run).rejects.toThrow(/^job data: /);
    await expect(run).rejects.toBeInstanceOf(UnrecoverableError);
  });
});
