import { describe, expect, it, vi } from 'vitest';
import { UnderstudyError, UpstreamError } from '../../src/errors.js';
import type { PartnersClient } from '../../src/partners/partners-client.js';
import type { Store } from '../../src/sync/store-port.js';
import type { RecordLine } from '../../src/writes/record-line.js';
import { ALREADY_APPLIED, type RunWriteDeps, runWrite, type WriteJobView } from '../../src/writes/run-write.js';
import type { WriteLog, WriteLogEntry } from '../../src/writes/write-log.js';
import type { WriteProgress } from '../../src/writes/write-progress.js';
import { silentLog } from '../helpers/sync-harness.js';

/** The write log in memory: the latest row per job. */
function memoryWriteLog(rows: WriteLogEntry[] = []): WriteLog & { readonly rows: Map<string, WriteLogEntry> } {
  const map = new Map(rows.map((r) => [r.jobId, r]));
  return {
    rows: map,
    record: async (e) => void map.set(e.jobId, e),
    get: async (id) => map.get(id) ?? null,
    list: async () => [...map.values()],
    close: async () => {},
  };
}

/** A record line where `ahead` (if set) is first; `leave` answers `next`. */
const line = (ahead?: string, next: string | null = null): RecordLine & { left: string[] } => {
  const left: string[] = [];
  return {
    left,
    turn: async () => (ahead ? { first: false, ahead } : { first: true }),
    leave: async (_t, jobId) => {
      left.push(jobId);
      return next;
    },
  };
};

const T0 = Date.parse('2026-03-01T00:00:00Z');

function setup(o: {
  client?: Partial<PartnersClient>;
  order?: RecordLine;
  rows?: WriteLogEntry[];
  tenant?: boolean;
  stopping?: AbortSignal;
}) {
  const writeLog = memoryWriteLog(o.rows);
  const promoted: string[] = [];
  const write = vi.fn(async () => ({ changes: [], inserted: 0, updated: 0, revived: 0, deleted: 1, unchanged: 0 }));
  const client = { tenant: 'acme', ...o.client } as unknown as PartnersClient;
  const deps: RunWriteDeps = {
    tenantFor: (slug) => (o.tenant === false || slug !== 'acme' ? null : { client, mirrorDrafts: false }),
    store: { write } as unknown as Store,
    writeLog,
    order: o.order ?? line(),
    promote: async (id) => void promoted.push(id),
    afterBulk: async () => {},
    attempts: 3,
    maxRateLimitWaitMs: 60_000,
    backoff: { baseMs: 1000, maxMs: 60_000 },
    orderRecheckMs: 2000,
    stopping: o.stopping ?? new AbortController().signal,
    log: silentLog,
    random: () => 0.5,
    now: () => T0 + 1000,
  };
  const saved: WriteProgress[] = [];
  const job = (data: unknown, progress: unknown = undefined): WriteJobView => ({
    id: 'job-1',
    timestamp: T0,
    data,
    progress,
    saveProgress: async (p) => void saved.push(p),
  });
  return { deps, writeLog, promoted, saved, job, write };
}

const update = {
  op: 'update',
  tenant: 'acme',
  collection: 'event-instances',
  id: 's1',
  body: { booking: { bookingLinkLabel: 'New' } },
};
const del = { op: 'delete', tenant: 'acme', collection: 'event-instances', id: 's1' };
const createNoSlug = { op: 'create', tenant: 'acme', collection: 'series', body: { title: 'No slug' } };
const upstream = (status: number, o: { retryAfterMs?: number } = {}) =>
  new UpstreamError('PATCH', '/partners/{version}/{tenant}/series/{id}', status, 'refused', o);
const throwing = (err: unknown) => async () => {
  throw err;
};

describe('runWrite: what becomes of a write job', () => {
  it('fails job data it cannot read, and logs nothing', async () => {
    const s = setup({});
    const d = await runWrite(s.deps, s.job({ op: 'nope' }));
    expect(d).toMatchObject({ kind: 'fail', message: expect.stringMatching(/^job data: /) });
    expect(s.writeLog.rows.size).toBe(0);
  });

  it('completes a write already applied without sending it again', async () => {
    const row = {
      jobId: 'job-1',
      status: 'ok',
      attempts: 1,
      resultId: 's1',
      enqueuedAt: new Date(T0).toISOString(),
    } as WriteLogEntry;
    const sent = vi.fn();
    const s = setup({ rows: [row], client: { delete: sent } });
    const d = await runWrite(s.deps, s.job(del));
    expect(d).toEqual({
      kind: 'complete',
      result: { status: 'ok', resultId: 's1', note: ALREADY_APPLIED, attempts: 1 },
    });
    expect(sent).not.toHaveBeenCalled();
  });

  it('fails a write of a tenant the worker does not know', async () => {
    const s = setup({ tenant: false });
    const d = await runWrite(s.deps, s.job(update));
    expect(d).toEqual({ kind: 'fail', message: 'tenant "acme" is not in the worker\'s config' });
    expect(s.writeLog.rows.get('job-1')).toMatchObject({ status: 'failed', errorCode: 'US_CONFIG' });
  });

  it('waits for an earlier write of the same record', async () => {
    const s = setup({ order: line('job-0') });
    const d = await runWrite(s.deps, s.job(update));
    expect(d).toEqual({ kind: 'delay', reason: 'wait-for-order', delayMs: 2000 });
    expect(s.writeLog.rows.get('job-1')).toMatchObject({
      status: 'delayed',
      note: 'waiting for job job-0 on the same record',
    });
    expect(s.saved).toEqual([]);
  });

  it('completes a delete, marks the mirror row deleted and wakes the next write of the record', async () => {
    const order = line(undefined, 'job-2');
    const s = setup({ order, client: { delete: async () => ({ id: 's1' }) } });
    const d = await runWrite(s.deps, s.job(del));
    expect(d).toEqual({ kind: 'complete', result: { status: 'ok', resultId: 's1', attempts: 1 } });
    expect(s.write).toHaveBeenCalledOnce();
    expect(order.left).toEqual(['job-1']);
    expect(s.promoted).toEqual(['job-2']);
    expect(s.writeLog.rows.get('job-1')).toMatchObject({ status: 'ok', attempts: 1, waitMs: 1000, runMs: 0 });
    expect(s.saved).toEqual([{ attempts: 1, unknownOutcome: false, sending: true, rateWaitMs: 0 }]);
  });

  const failures: [string, unknown, unknown, Partial<WriteLogEntry>, WriteProgress][] = [
    [
      '429: waits Retry-After without spending an attempt',
      upstream(429, { retryAfterMs: 3000 }),
      { kind: 'delay', reason: 'wait-rate', delayMs: 3000 },
      { status: 'delayed', attempts: 0, upstreamStatus: 429, note: 'rate limited: retry in 3000 ms' },
      { attempts: 0, unknownOutcome: false, sending: false, rateWaitMs: 3000 },
    ],
    [
      '503: backs off, the attempt spent and the outcome unknown',
      upstream(503),
      { kind: 'delay', reason: 'retry-after', delayMs: 500 },
      { status: 'retrying', attempts: 1, upstreamStatus: 503, note: 'retry in 500 ms (outcome unknown)' },
      {
        attempts: 1,
        unknownOutcome: true,
        sending: false,
        rateWaitMs: 0,
        error: { code: 'US_UPSTREAM_UNAVAILABLE', status: 503, message: expect.stringContaining('-> 503') },
      },
    ],
    [
      '422: fails at once with the upstream words',
      upstream(422),
      { kind: 'fail', message: 'PATCH /partners/{version}/{tenant}/series/{id} -> 422: refused' },
      { status: 'failed', attempts: 1, upstreamStatus: 422 },
      {
        attempts: 1,
        unknownOutcome: false,
        sending: false,
        rateWaitMs: 0,
        error: {
          code: 'US_UPSTREAM',
          status: 422,
          message: 'PATCH /partners/{version}/{tenant}/series/{id} -> 422: refused',
        },
      },
    ],
  ];
  it.each(failures)('%s', async (_name, err, decision, row, progress) => {
    const order = line();
    const s = setup({ order, client: { update: throwing(err) } });
    expect(await runWrite(s.deps, s.job(update))).toEqual(decision);
    expect(s.writeLog.rows.get('job-1')).toMatchObject(row);
    expect(s.saved.at(-1)).toEqual(progress);
    expect(order.left).toEqual((decision as { kind: string }).kind === 'fail' ? ['job-1'] : []);
  });

  it('gives up on the last attempt', async () => {
    const s = setup({ client: { update: throwing(upstream(503)) } });
    const d = await runWrite(
      s.deps,
      s.job(update, { attempts: 2, unknownOutcome: true, sending: false, rateWaitMs: 0 }),
    );
    expect(d).toMatchObject({ kind: 'fail', message: expect.stringMatching(/^gave up after 3 attempt\(s\)/) });
  });

  it('does not send again a create that may have been applied and has nothing to look it up by', async () => {
    const s = setup({ client: { create: throwing(upstream(502)) } });
    const d = await runWrite(s.deps, s.job(createNoSlug));
    expect(d).toMatchObject({ kind: 'fail', message: expect.stringMatching(/^outcome unknown: attempt 1/) });
    expect(s.writeLog.rows.get('job-1')).toMatchObject({ status: 'failed', errorCode: 'US_OUTCOME_UNKNOWN' });
  });

  it('hands a job back at shutdown without counting an attempt that was not sent', async () => {
    const stop = new AbortController();
    stop.abort();
    const s = setup({ stopping: stop.signal, client: { update: throwing(new UnderstudyError('US_ABORTED', 'stop')) } });
    const d = await runWrite(s.deps, s.job(update));
    expect(d).toEqual({ kind: 'delay', reason: 'hand-back', delayMs: 0 });
    expect(s.writeLog.rows.get('job-1')).toMatchObject({ status: 'delayed', note: 'handed back at shutdown' });
    expect(s.saved.at(-1)).toEqual({ attempts: 0, unknownOutcome: false, sending: false, rateWaitMs: 0 });
  });
});
