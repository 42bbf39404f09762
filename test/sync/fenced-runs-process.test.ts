import { once } from 'node:events';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startSimulator } from '../../src/sim/start-simulator.js';
import { collect, runCli, spawnCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/sync-harness.js';

// These tests run the built CLI (bin/understudy runs dist/): `npm run build` first (`npm test` does).

const C = 'event-instances';

interface Report {
  tenants: { collections: { name: string; deleted: number; fetched: number; skipped?: string }[] }[];
}
const reportOf = (stdout: string): Report['tenants'][number]['collections'][number] | undefined =>
  (JSON.parse(stdout) as Report).tenants[0]?.collections[0];

async function setup() {
  const sim = await startSimulator({ port: 0, records: 40, readLimit: 0, writeLimit: 0, maxLimit: 10, tenants: 1 });
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
  const count = (where: string) => {
    const d = new Database(db, { readonly: true });
    try {
      return (d.prepare(`SELECT count(*) AS n FROM event_instances WHERE ${where}`).get() as { n: number }).n;
    } finally {
      d.close();
    }
  };
  const upstream = () => sim.controls.docs(t.slug, C).length;
  /** Holds the `n`th request for the collection from now on until `release()`; `held` resolves when it arrives. */
  const hold = (n: number) => {
    let seen = 0;
    let release = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let arrived = () => {};
    const held = new Promise<void>((r) => {
      arrived = r;
    });
    const off = sim.controls.beforeRequest(async (r) => {
      if (!r.path.includes(C)) return;
      if (++seen === n) {
        arrived();
        await gate;
      }
    });
    return {
      held,
      release: () => {
        off();
        release();
      },
    };
  };
  return { sim, t, db, args, env, count, upstream, hold };
}

describe('runs on one collection are fenced (real processes, one SQLite mirror)', () => {
  it('a slow --full overtaken by an incremental run and a second --full: they are skipped, nothing is tombstoned', async () => {
    const { args, env, count, upstream, hold } = await setup();
    expect((await runCli(args('--full'), { env })).code).toBe(0);
    const gate = hold(3);
    const slow = spawnCli(args('--full'), { env });
    const slowDone = collect(slow);
    await gate.held;
    // Two cron-started runs while the slow one holds the collection: each reports it locked and exits 75.
    for (const mode of [[], ['--full']]) {
      const r = await runCli(args(...mode), { env });
      expect(r.code, r.stderr).toBe(75);
      expect(reportOf(r.stdout)).toMatchObject({ skipped: 'locked by another run', fetched: 0, deleted: 0 });
    }
    gate.release();
    const done = await slowDone;
    expect(done.code, done.stderr).toBe(0);
    expect(reportOf(done.stdout)?.deleted).toBe(0);
    const after = await runCli(args(), { env });
    expect(after.code, after.stderr).toBe(0);
    expect(count('deleted_at IS NULL')).toBe(upstream());
    expect(count('deleted_at IS NOT NULL')).toBe(0);
  });

  it('--wait on SQLite waits for a live holder, then runs and prints its outcome (never exit 13, nothing printed)', async () => {
    const { args, env, count, upstream, hold } = await setup();
    expect((await runCli(args('--full'), { env })).code).toBe(0);
    const gate = hold(3);
    const first = spawnCli(args('--full'), { env });
    const firstDone = collect(first);
    await gate.held;
    const second = spawnCli(args('--wait', '60'), { env });
    const secondDone = collect(second);
    // Long enough for Node to notice an empty event loop (it did after 2-4 s), short of the lease's expiry.
    await new Promise((resolve) => setTimeout(resolve, 5000));
    gate.release();
    expect((await firstDone).code).toBe(0);
    const r = await secondDone;
    expect(r.code, r.stderr).toBe(0);
    expect(reportOf(r.stdout)).toMatchObject({ name: C });
    expect(reportOf(r.stdout)?.skipped).toBeUndefined();
    expect(count('deleted_at IS NULL')).toBe(upstream());
  });

  it('--wait waits for the holder; a holder killed with SIGKILL is taken over at once, losing nothing', async () => {
    const { args, env, count, upstream, hold, sim, t } = await setup();
    expect((await runCli(args('--full'), { env })).code).toBe(0);
    const gone = sim.controls.mutate({ tenant: t.slug, collection: C, deletes: 3 }).deleted;
    const gate = hold(2);
    const first = spawnCli(args('--full'), { env });
    await gate.held;
    const second = spawnCli(args('--full', '--wait', '60'), { env });
    const secondDone = collect(second);
    first.kill('SIGKILL');
    await once(first, 'close');
    gate.release();
    const r = await secondDone;
    expect(r.code, r.stderr).toBe(0);
    // The second run resumed the killed run's full pass: the records deleted upstream are tombstoned, no other.
    expect(reportOf(r.stdout)?.deleted).toBe(gone.length);
    expect(count('deleted_at IS NULL')).toBe(upstream());
    expect(count('deleted_at IS NOT NULL')).toBe(gone.length);
  });
});
