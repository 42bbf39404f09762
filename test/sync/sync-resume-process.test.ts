import { once } from 'node:events';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { type Simulator, startSimulator } from '../../src/sim/start-simulator.js';
import { runCli, spawnCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/sync-harness.js';

// These tests run the built CLI (bin/understudy runs dist/): `npm run build` first (`npm test` does).

const C = 'event-instances';

async function setup() {
  const sim = await startSimulator({ port: 0, records: 12, readLimit: 0, writeLimit: 0, maxLimit: 5, tenants: 1 });
  onTestFinished(() => sim.close());
  const t = sim.tenants[0];
  if (!t) throw new Error('no tenant');
  const db = join(tempDir(), 'mirror.db');
  const args = (...more: string[]) => [
    'sync',
    '--base-url',
    sim.url,
    '--tenant',
    t.slug,
    '--db',
    db,
    '--collection',
    C,
    '--json',
    ...more,
  ];
  const env = { PARTNERS_API_KEY: t.key, LOG_LEVEL: 'warn' };
  const live = () => {
    const d = new Database(db, { readonly: true });
    try {
      return (
        d.prepare('SELECT id FROM event_instances WHERE deleted_at IS NULL ORDER BY id').all() as { id: string }[]
      ).map((r) => r.id);
    } finally {
      d.close();
    }
  };
  return { sim, t, db, args, env, live };
}

/**
 * Runs the CLI until its `n`th request for the collection arrives, holds that request, and kills the process with
 * SIGKILL. Sync fetches the next page while the previous one commits, so when request n arrives the pages answered
 * before the last one are committed for sure, and the last one (n - 1) may be committing: `committed` lists the
 * first n - 2.
 */
async function killAtRequest(sim: Simulator, argv: string[], env: NodeJS.ProcessEnv, n: number) {
  sim.controls.reset();
  let release = () => {};
  const held = new Promise<void>((r) => {
    release = r;
  });
  let arrived = () => {};
  const reached = new Promise<void>((r) => {
    arrived = r;
  });
  let seen = 0;
  const off = sim.controls.beforeRequest(async (r) => {
    if (!r.path.includes(C)) return;
    if (++seen === n) {
      arrived();
      await held;
    }
  });
  const child = spawnCli(argv, { env });
  await reached;
  child.kill('SIGKILL');
  await once(child, 'close');
  const log = sim.controls.requestLog().filter((e) => e.path.includes(C));
  off();
  release();
  return {
    committed: log
      .filter((e) => e.status === 200)
      .map((e) => e.path)
      .slice(0, n - 2),
  };
}

describe('a sync killed with SIGKILL resumes from its last committed page', () => {
  it('an incremental run asks for no committed page again and takes every edit', async () => {
    const { sim, t, db, args, env } = await setup();
    expect((await runCli(args('--full'), { env })).code).toBe(0);
    sim.controls.mutate({ tenant: t.slug, collection: C, edits: 30 });
    const { committed } = await killAtRequest(sim, args(), env, 5);
    expect(committed).toHaveLength(3);
    sim.controls.reset();
    const resumed = await runCli(args(), { env });
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
    const { sim, t, args, env, live } = await setup();
    expect((await runCli(args('--full'), { env })).code).toBe(0);
    const gone = sim.controls.mutate({ tenant: t.slug, collection: C, deletes: 4 }).deleted;
    const { committed } = await killAtRequest(sim, args('--full'), env, 5);
    expect(committed).toHaveLength(3);
    sim.controls.reset();
    const resumed = await runCli(args('--full'), { env });
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
