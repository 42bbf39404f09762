import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discoverRoutes } from '../../src/sync/discover-routes.js';
import type { Store } from '../../src/sync/store-port.js';
import { syncCollection } from '../../src/sync/sync-collection.js';
import { aroundWrites } from '../helpers/store-intercept.js';
import { syncHarness } from '../helpers/sync-harness.js';

const signal = () => new AbortController().signal;

/** The store, each page's commit held until `release` settles (a commit that yields, as PostgreSQL's do). */
const slowCommits = (store: Store, release: () => Promise<unknown>): Store =>
  aroundWrites(store, async (batch, write) => {
    if ((batch.upserts?.length ?? 0) > 0) await release();
    return write();
  });

describe('a failed request for the page fetched ahead', () => {
  const unhandled: unknown[] = [];
  const record = (reason: unknown) => unhandled.push(reason);
  beforeEach(() => {
    unhandled.length = 0;
    process.on('unhandledRejection', record);
  });
  afterEach(() => {
    process.off('unhandledRejection', record);
  });

  it('fails that collection with its error while the page before it commits: no unhandled rejection', async () => {
    const h = await syncHarness({ routes: 'full', records: 30, maxLimit: 10 });
    const r = await discoverRoutes(h.client, { signal: signal() });
    const C = 'forms';
    // The second list request of the pass (the page fetched ahead while the first commits) answers 400 at once.
    let requests = 0;
    h.sim.controls.injectFaults({ kind: 'latency', ms: 0, count: 1, match: { path: `/${C}?` } });
    h.sim.controls.injectFaults({ kind: 'status', status: 400, count: 1, match: { path: `/${C}?` } });
    // Each commit waits until the look-ahead has had time to fail (and a turn of the event loop passed).
    const store = slowCommits(h.store, async () => {
      requests++;
      await new Promise((resolve) => setTimeout(resolve, 300));
    });
    const report = await syncCollection(h.deps({ store, pageSize: 10 }), h.target, C, 'full', r, signal());
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(requests).toBe(1);
    expect(report.error).toMatch(/400/);
    expect(unhandled).toEqual([]);
    // The first page stays committed; the next run resumes and finishes the pass.
    const again = await syncCollection(h.deps({ pageSize: 10 }), h.target, C, 'full', r, signal());
    expect(again.error).toBeUndefined();
    expect(
      h.query<{ n: number }>(
        'SELECT count(*) AS n FROM forms WHERE tenant = ? AND deleted_at IS NULL',
        h.tenant.slug,
      )[0]?.n,
    ).toBe(h.upstream(C).length);
  });
});
