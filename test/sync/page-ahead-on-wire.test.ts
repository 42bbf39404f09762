import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { describe, expect, it, onTestFinished } from 'vitest';
import { discoverRoutes } from '../../src/sync/discover-routes.js';
import { syncCollection } from '../../src/sync/sync-collection.js';
import { aroundWrites } from '../helpers/store-intercept.js';
import { syncHarness } from '../helpers/sync-harness.js';

// SQLite commits hold the thread. The page fetched ahead must be on the wire before a commit starts, or the upstream
// only starts building it once the commit is over, and the sync waits for every page in turn (issue 39, item 3:
// a wait of 10 to 30 ms per page, 18% of the sync's wall time, in a CPU profile of `npm run bench -- sim-sync`).

describe('the page fetched ahead', () => {
  it('has its request sent before the page before it starts to commit', async () => {
    const h = await syncHarness({ routes: 'full', records: 60, maxLimit: 10 });
    const r = await discoverRoutes(h.client, { signal: new AbortController().signal });
    const C = 'forms';
    // undici says when a request's headers were written to its socket.
    const sent: string[] = [];
    const onSent = (message: unknown) => {
      const { request } = message as { request: { path: string } };
      if (request.path.includes(`/${C}?`)) sent.push(request.path);
    };
    subscribe('undici:client:sendHeaders', onSent);
    onTestFinished(() => {
      unsubscribe('undici:client:sendHeaders', onSent);
    });
    // At the start of each commit (synchronously, as SQLite's would hold the thread): how many pages were asked for.
    const askedAtCommit: number[] = [];
    const store = aroundWrites(h.store, (batch, write) => {
      if ((batch.upserts?.length ?? 0) > 0) askedAtCommit.push(sent.length);
      return write();
    });
    const report = await syncCollection(
      h.deps({ store, pageSize: 10 }),
      h.target,
      C,
      'full',
      r,
      AbortSignal.timeout(30_000),
    );
    expect(report.error).toBeUndefined();
    const pages = Math.ceil(h.upstream(C).length / 10);
    expect(pages).toBeGreaterThan(2);
    expect(askedAtCommit).toHaveLength(pages);
    // Page k (from 0) commits with page k + 1 already asked for: k + 2 requests sent (the last page may have none
    // after it, when it is not full).
    expect(askedAtCommit.slice(0, -1)).toEqual(askedAtCommit.slice(0, -1).map((_, k) => k + 2));
  });
});
