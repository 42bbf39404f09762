import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Change } from '../../src/changes/change-log-port.js';
import { openMirror } from '../../src/store/open-mirror.js';
import { PUBLISHED } from '../../src/sync/store-port.js';
import { tenantSlug } from '../../src/vocabulary/ids.js';
import { pgQuery, testDatabase } from '../helpers/postgres.js';
import { type CliResult, collect, spawnCli } from '../helpers/run-cli.js';

// Real processes on one PostgreSQL mirror: the writers are `Store.write` in processes of their own (the built
// store, as a worker runs it), the readers `understudy changes --follow`.
const STORE = fileURLToPath(new URL('../../dist/src/store/open-mirror.js', import.meta.url));

/**
 * A writer process: `rounds` transactions of upserts (and now and then a delete) of series r0..r5 of `tenant`.
 * `fenced`: under the collection's lease, as a sync run writes (its first statement renews the lease, so the
 * transaction takes its id before its seqs); else as write-throughs, which take no lease.
 */
function writer(url: string, tenant: string, fenced: boolean, rounds: number): Promise<CliResult> {
  const code = `import(${JSON.stringify(STORE)}).then(async ({ openStore }) => {
    const store = await openStore(${JSON.stringify(url)});
    const key = { tenant: ${JSON.stringify(tenant)}, collection: 'series', variant: 'published' };
    const fence = ${fenced} ? await store.acquireLease(key.tenant, 'series', 'writer-' + process.pid, 60000) : undefined;
    if (${fenced} && !fence) throw new Error('no lease');
    for (let i = 0; i < ${rounds}; i++) {
      // Distinct, growing instants per process, so that two writers of one record both change it.
      const at = (n) => new Date(Date.UTC(2026, 0, 1) + (i * 100 + n) * 1000 + process.pid % 997).toISOString();
      const ids = ['r0', 'r1', 'r2', 'r3', 'r4', 'r5'].filter((_, n) => (n + i) % 3 !== 0);
      const batch = i % 5 === 4
        ? { deletes: ['r' + (i % 6)], source: 'write' }
        : { upserts: ids.map((id, n) => ({ id, updatedAt: at(n), title: id + ' ' + i })), source: ${fenced} ? 'sync' : 'write' };
      await store.write(key, fence ? { ...batch, fence } : batch);
    }
    await store.close();
  })`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'pipe'] });
  onTestFinished(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  return collect(child);
}

/** `understudy changes --follow --since N --json` in the background: every change it prints, as it prints it. */
function follower(url: string, since: number) {
  const child = spawnCli(['changes', '--db', url, '--follow', '--since', String(since), '--json']);
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = collect(child);
  return {
    seen: (): Change[] =>
      out
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Change),
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** The seqs of the log after `since`, as the table holds them once every writer has ended. */
const seqsAfter = async (url: string, since: number): Promise<number[]> =>
  (await pgQuery(url, 'SELECT seq FROM changes WHERE seq > ? ORDER BY seq', [since])).map((r) => Number(r.seq));

/** Consecutive changes of one record chain up: each starts from the `updated_at` the previous one left. */
function brokenChains(log: readonly Change[]): string[] {
  const last = new Map<string, Change>();
  const broken: string[] = [];
  for (const c of log) {
    const k = `${c.tenant}/${c.collection}/${c.variant}/${c.id}`;
    const prev = last.get(k);
    if (prev && c.updated_at_before !== prev.updated_at_after) broken.push(`${k}: seq ${prev.seq} then ${c.seq}`);
    last.set(k, c);
  }
  return broken;
}

describe('the change feed with writers committing in parallel on one PostgreSQL mirror', () => {
  it('4 writer processes (2 tenants of their own, 2 on one tenant) and 2 followers: each sees every change once, each record in order', async () => {
    const url = await testDatabase();
    const seed = await openMirror(url);
    await seed.store.write(
      { tenant: tenantSlug('shared'), collection: 'series', variant: PUBLISHED },
      { upserts: [{ id: 'r0', updatedAt: '2025-12-31T00:00:00.000Z' }] },
    );
    const since = (await seed.changes.lastSeq()) - 1;
    await seed.close();
    // Both follow from before the seed: once each has printed it, each is polling as the writers start.
    const readers = [follower(url, since), follower(url, since)];
    for (const r of readers) await expect.poll(() => r.seen().length, { timeout: 30_000 }).toBe(1);

    const rounds = 30;
    const writers = await Promise.all([
      writer(url, 'solo-a', true, rounds),
      writer(url, 'solo-b', true, rounds),
      writer(url, 'shared', false, rounds),
      writer(url, 'shared', false, rounds),
    ]);
    for (const w of writers) expect({ code: w.code, stderr: w.stderr }).toEqual({ code: 0, stderr: '' });

    const logged = await seqsAfter(url, since);
    expect(logged.length).toBeGreaterThan(4 * rounds); // every round of every writer logged something
    for (const r of readers) await expect.poll(() => r.seen().length, { timeout: 60_000 }).toBe(logged.length);
    for (const r of readers) {
      const stopped = await r.stop();
      expect({ code: stopped.code, stderr: stopped.stderr }).toEqual({ code: 0, stderr: '' });
      const seen = r.seen();
      // Exactly once, in seq order: the seqs printed are the table's, each once, none skipped.
      expect(seen.map((c) => c.seq)).toEqual(logged);
      expect(brokenChains(seen)).toEqual([]);
      expect(new Set(seen.map((c) => c.tenant))).toEqual(new Set(['solo-a', 'solo-b', 'shared']));
    }
  });

  it("a transaction of one tenant held open 10 s delays no other tenant's commit; the feed waits for it, then has all", async () => {
    const url = await testDatabase();
    const mirror = await openMirror(url);
    onTestFinished(() => mirror.close());
    const slowKey = { tenant: tenantSlug('slow'), collection: 'series' as const, variant: PUBLISHED };
    const fastKey = { tenant: tenantSlug('fast'), collection: 'series' as const, variant: PUBLISHED };
    await mirror.store.write(slowKey, { upserts: [{ id: 's', updatedAt: '2026-01-01T00:00:00.000Z' }] });
    const since = (await mirror.changes.lastSeq()) - 1;
    const reader = follower(url, since);
    await expect.poll(() => reader.seen().length, { timeout: 30_000 }).toBe(1); // following, from before the insert

    // The slow tenant's transaction logs its change (it takes a seq), then stays open for 10 s.
    const slow = new pg.Client({ connectionString: url });
    await slow.connect();
    onTestFinished(() => slow.end());
    await slow.query('BEGIN');
    await slow.query('SELECT understudy_note_seq_floor()');
    await slow.query(
      `UPDATE series SET doc = '{"id":"s","updatedAt":"2026-01-02T00:00:00.000Z"}', updated_at = '2026-01-02T00:00:00.000Z',
         mirrored_at = '2026-01-02T00:00:00.000Z', last_change = 'update' WHERE tenant = 'slow' AND id = 's'`,
    );
    const opened = performance.now();
    // The one wait of the test is the scenario itself: the transaction held open for 10 s.
    const held = sleep(10_000).then(() => slow.query('COMMIT'));

    // Meanwhile the other tenant commits page after page. Each commit normally takes milliseconds; the bound is
    // the 1 s, generous on a loaded machine (before 2026-11-28-070 each one waited out the 10 s).
    const latencies: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      await mirror.store.write(fastKey, {
        upserts: [{ id: `f${i}`, updatedAt: '2026-01-01T00:00:00.000Z', title: `fast ${i}` }],
      });
      latencies.push(performance.now() - t0);
    }
    expect(performance.now() - opened).toBeLessThan(10_000); // all of them while the slow one was open
    expect(Math.max(...latencies)).toBeLessThan(1_000);

    // Committed, but behind the slow one's seq: no reader passes it while it may still commit.
    expect((await mirror.changes.read({ since })).map((c) => c.kind)).toEqual(['insert']);
    expect(reader.seen().map((c) => c.kind)).toEqual(['insert']);
    await held;
    const logged = await seqsAfter(url, since);
    expect(logged).toHaveLength(22);
    await expect.poll(() => reader.seen().length, { timeout: 30_000 }).toBe(22);
    const seen = reader.seen();
    expect(seen.map((c) => c.seq)).toEqual(logged);
    expect(seen[1]).toMatchObject({ tenant: 'slow', id: 's', kind: 'update' });
    expect((await mirror.changes.read({ since })).map((c) => c.seq)).toEqual(logged);
    await reader.stop();
  });
});
