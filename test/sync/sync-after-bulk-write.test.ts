import { describe, expect, it } from 'vitest';
import { discoverRoutes } from '../../src/sync/discover-routes.js';
import type { CollectionLockAttempt } from '../../src/sync/run-collection-job.js';
import { type SyncAfterBulkDeps, syncAfterBulkWrite } from '../../src/sync/sync-after-bulk-write.js';
import { silentLog, syncHarness } from '../helpers/sync-harness.js';

async function setup(opts: { mode?: 'inline' | 'queue'; lockHeld?: boolean } = {}) {
  const h = await syncHarness();
  const calls = { locks: 0, released: 0, queued: [] as string[] };
  const lock = (): CollectionLockAttempt =>
    opts.lockHeld === false
      ? { held: false, retryInMs: 1000 }
      : { held: true, lock: { release: async () => void calls.released++ } };
  const deps: SyncAfterBulkDeps = {
    mode: opts.mode ?? 'inline',
    store: h.store,
    log: silentLog,
    routesOf: (_tenant, signal) => discoverRoutes(h.client, { signal }),
    takeLock: async () => {
      calls.locks++;
      return lock();
    },
    queueSync: async (tenant, collection) => {
      calls.queued.push(`${tenant}/${collection}`);
      return 'job-1';
    },
  };
  const run = () => syncAfterBulkWrite(deps, h, 'series', new AbortController().signal);
  const mirrored = () => h.query('SELECT id FROM series WHERE deleted_at IS NULL').length;
  return { h, calls, run, mirrored };
}

describe('syncAfterBulkWrite: the mirror after a bulk write', () => {
  it('syncs the collection under its lock, then releases the lock', async () => {
    const s = await setup();
    await s.run();
    expect(s.mirrored()).toBe(s.h.upstream('series').length);
    expect(s.calls).toEqual({ locks: 1, released: 1, queued: [] });
  });

  it('queues a sync job instead while another job holds the collection', async () => {
    const s = await setup({ lockHeld: false });
    await s.run();
    expect(s.mirrored()).toBe(0);
    expect(s.calls.queued).toEqual([`${s.h.tenant.slug}/series`]);
    expect(s.h.sim.controls.requestLog()).toEqual([]);
  });

  it('always queues a sync job in queue mode, without taking the lock', async () => {
    const s = await setup({ mode: 'queue' });
    await s.run();
    expect(s.calls).toEqual({ locks: 0, released: 0, queued: [`${s.h.tenant.slug}/series`] });
  });

  it('throws US_UPSTREAM when the sync fails, and still releases the lock', async () => {
    const s = await setup();
    s.h.sim.controls.injectFaults({ kind: 'status', status: 503, count: 100, match: { path: '/series' } });
    await expect(s.run()).rejects.toMatchObject({
      code: 'US_UPSTREAM',
      message: expect.stringMatching(/^incremental sync of series: /),
    });
    expect(s.calls.released).toBe(1);
  });
});
