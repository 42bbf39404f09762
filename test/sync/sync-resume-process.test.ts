import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { holdRequest } from '../helpers/hold-request.js';
import { runCli } from '../helpers/run-cli.js';
import { syncProcessHarness } from '../helpers/sync-process-harness.js';

// These tests run the built CLI (bin/understudy runs dist/): `npm run build` first (`npm test` does).

const C = 'event-instances';

async function setup() {
  const h = await syncProcessHarness(C, { records: 12, maxLimit: 5 });
  const live = () => {
    const d = new Database(h.db, { readonly: true });
    try {
      return (
        d.prepare('SELECT id FROM event_instances WHERE deleted_at IS NULL ORDER BY id').all() as { id: string }[]
      ).map((r) => r.id);
    } finally {
      d.close();
    }
  };
  /**
   * Starts `sync …flags` and kills it with SIGKILL when its `n`th request for the collection arrives (held until
   * then). Sync fetches the next page while the previous one commits, so when request n arrives the pages answered
   * before the last one are committed for sure, and the last one (n - 1) may be committing: `committed` lists the
   * first n - 2.
   */
  const killAtRequest = async (flags: string[], n: number) => {
    h.sim.controls.reset();
    const nth = holdRequest(h.sim, n, C);
    const child = h.start(...flags);
    await nth.reached;
    await child.stop('SIGKILL');
    const log = h.sim.controls.requestLog().filter((e) => e.path.includes(C));
    nth.release();
    return {
      committed: log
        .filter((e) => e.status === 200)
        .map((e) => e.path)
        .slice(0, n - 2),
    };
  };
  return { ...h, live, killAtRequest };
}

describe('a sync killed with SIGKILL resumes from its last committed page', () => {
  it('an incremental run asks for no committed page again and takes every edit', async () => {
    const { sim, t, db, env, run, killAtRequest } = await setup();
    expect((await run('--full')).code).toBe(0);
    sim.controls.mutate({ tenant: t.slug, collection: C, edits: 30 });
    const { committed } = await killAtRequest([], 5);
    expect(committed).toHaveLength(3);
    sim.controls.reset();
    const resumed = await run();
    expect(resumed.code, resumed.stderr).toBe(0);
    const again = sim.controls.requestLog().map((e) => e.path);
    expect(again.filter((p) => committed.includes(p))).toEqual([]);
    const report = JSON.parse(resumed.stdout) as { tenants: { collections: { fetched: number }[] }[] };
    // 3 committed pages of 5 records; the rest of the 30 edits (and no committed one) are fetched now.
    expect(report.tenants[0]?.collections[0]?.fetched).toBeLessThanOrEqual(30 - 3 * 5 + 1);
    const upstream = sim.controls.docs(t.slug, C);
    const mirror = await runCli(
      [
        'sql',
        '--db',
        db,
        '--json',
        "SELECT id, json_extract(doc, '$.updatedAt') AS u FROM event_instances WHERE deleted_at IS NULL",
      ],
      { env },
    );
    const rows = new Map((JSON.parse(mirror.stdout) as { id: string; u: string }[]).map((r) => [r.id, r.u]));
    for (const d of upstream) expect(rows.get(String(d.id)), String(d.id)).toBe(d.updatedAt);
  });

  it('a full run asks for no committed page again and still marks deletions', async () => {
    const { sim, t, run, live, killAtRequest } = await setup();
    expect((await run('--full')).code).toBe(0);
    const gone = sim.controls.mutate({ tenant: t.slug, collection: C, deletes: 4 }).deleted;
    const { committed } = await killAtRequest(['--full'], 5);
    expect(committed).toHaveLength(3);
    sim.controls.reset();
    const resumed = await run('--full');
    expect(resumed.code, resumed.stderr).toBe(0);
    const again = sim.controls.requestLog().map((e) => e.path);
    expect(again.filter((p) => committed.includes(p))).toEqual([]);
    const upstream = sim.controls
      .docs(t.slug, C)
      .map((d) => String(d.id))
      .sort();
    expect(live()).toEqual(upstream);
    for (const id of gone) expect(live()).not.toContain(id);
  });
});
