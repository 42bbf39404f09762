import { describe, expect, it } from 'vitest';
import { discoverRoutes } from '../../src/sync/discover-routes.js';
import { syncCollection } from '../../src/sync/sync-collection.js';
import { syncHarness } from '../helpers/sync-harness.js';

describe("a run's failure in the sync state", () => {
  it('records when it failed and in which variant, which watch alone covers when it is the published one', async () => {
    const h = await syncHarness({ records: 6 });
    const routes = await discoverRoutes(h.client, { signal: AbortSignal.timeout(5000) });
    const target = { ...h.target, drafts: true };
    const run = () => syncCollection(h.deps(), target, 'pages', 'full', routes, AbortSignal.timeout(20_000));
    const state = () =>
      h.query<{ last_error: string | null; last_error_at: string | null; last_error_variant: string | null }>(
        "SELECT last_error, last_error_at, last_error_variant FROM sync_state WHERE collection = 'pages' AND variant = 'published'",
      )[0];

    // The published pass goes through; the drafts' pass is refused (400: not retried).
    h.sim.controls.injectFaults({ kind: 'status', status: 400, count: 1, match: { path: 'draft=true' } });
    const before = Date.now();
    expect((await run()).error).toMatch(/400/);
    const drafts = state();
    expect(drafts).toMatchObject({ last_error: expect.stringMatching(/400/), last_error_variant: 'draft' });
    expect(Date.parse(drafts?.last_error_at ?? '')).toBeGreaterThanOrEqual(before);

    // The published pass itself refused, its first read.
    h.sim.controls.injectFaults({ kind: 'status', status: 400, count: 1, match: { path: '/pages?' } });
    expect((await run()).error).toMatch(/400/);
    expect(state()).toMatchObject({ last_error_variant: 'published' });

    // A run that goes through clears the failure, its time and its variant.
    expect((await run()).error).toBeUndefined();
    expect(state()).toEqual({ last_error: null, last_error_at: null, last_error_variant: null });
  });
});
