import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runShell, shq, twoTenantSim, writeConfig } from '../helpers/operator.js';
import { startRedis } from '../helpers/redis-server.js';
import { tempDir } from '../helpers/sync-harness.js';

/** A mirror of two tenants synced once; `config` names it. */
async function synced() {
  const { sim, a, b } = await twoTenantSim();
  const dir = tempDir();
  const db = join(dir, 'm.db');
  const tenants = [
    { slug: a.slug, apiKeyEnv: 'KEY_A' },
    { slug: b.slug, apiKeyEnv: 'KEY_B' },
  ];
  const config = writeConfig(dir, 'c.json', { baseUrl: sim.url, database: db, tenants });
  const keys = { KEY_A: a.key, KEY_B: b.key };
  const r = await runShell(`$U sync --config ${shq(config)} --quiet`, keys);
  expect(r.code, r.stderr).toBe(0);
  return { sim, a, b, dir, db, config, keys, tenants };
}

/** Moves every last success of the mirror back by `seconds` (as if the mirror had not synced since). */
function age(db: string, seconds: number): void {
  const raw = new Database(db);
  const at = new Date(Date.now() - seconds * 1000).toISOString();
  raw.prepare('UPDATE sync_state SET last_success_at = ?').run(at);
  raw.close();
}

describe('status as a health check', () => {
  it('--check exits 0 on a healthy mirror, 5 after a failed run, 7 for a missing mirror, naming each finding', async () => {
    const t = await synced();
    const ok = await runShell(`$U status --config ${shq(t.config)} --check`);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).toBe('');

    const refused = writeConfig(t.dir, 'bad.json', {
      baseUrl: t.sim.url,
      database: t.db,
      tenants: [{ slug: t.a.slug, apiKeyEnv: 'WRONG' }, t.tenants[1]],
    });
    const sync = await runShell(`$U sync --config ${shq(refused)} --quiet`, {
      ...t.keys,
      WRONG: 'sk_wrong-wrong-wrong',
    });
    expect(sync.code).toBe(3);
    const failed = await runShell(`$U status --config ${shq(refused)} --check --quiet`);
    expect(failed.code).toBe(5);
    expect(failed.stdout).toBe('');
    expect(failed.stderr).toMatch(new RegExp(`^understudy status: ${t.a.slug} \\S+: last run failed: .*401`, 'm'));

    const missing = await runShell(`$U status --db ${shq(join(t.dir, 'nowhere', 'none.db'))} --check`);
    expect(missing.code).toBe(7);
    expect(missing.stderr).toMatch(/none\.db does not exist/);
    // A configured tenant that has nothing in the mirror is missing too.
    const more = writeConfig(t.dir, 'more.json', {
      baseUrl: t.sim.url,
      database: t.db,
      tenants: [...t.tenants, { slug: 'never-synced', apiKeyEnv: 'KEY_C' }],
    });
    const never = await runShell(`$U status --config ${shq(more)} --check`);
    expect(never.code).toBe(7);
    expect(never.stderr).toMatch(/never-synced: nothing mirrored yet/);
  });

  it('--max-age: 0 while the last success is younger, 6 once it is older, in any spelling of a duration', async () => {
    const t = await synced();
    for (const young of ['3600', '3600s', '60m', '1h', 'PT1H']) {
      const r = await runShell(`$U status --config ${shq(t.config)} --check --max-age ${young}`);
      expect(r.code, `${young}: ${r.stderr}`).toBe(0);
    }
    age(t.db, 7200);
    const stale = await runShell(`$U status --config ${shq(t.config)} --check --max-age 1h`);
    expect(stale.code).toBe(6);
    expect(stale.stderr).toMatch(/last success 2 h 00 min ago, older than --max-age \(3600 s\)/);
    const bad = await runShell(`$U status --config ${shq(t.config)} --check --max-age soon`);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--max-age soon: not a duration/);
    const json = await runShell(`$U status --config ${shq(t.config)} --check --max-age 1h --json`);
    expect(json.code).toBe(6);
    const report = JSON.parse(json.stdout) as { check: { ok: boolean; exitCode: number; findings: string[] } };
    expect(report.check).toMatchObject({ ok: false, exitCode: 6 });
  });

  it('fits 100 columns with one way of showing times, and reads Redis only when configured', async () => {
    const t = await synced();
    // A long error must not widen the table.
    const raw = new Database(t.db);
    raw.prepare('UPDATE sync_state SET last_error = ? WHERE collection = ?').run(`boom ${'x'.repeat(300)}`, 'series');
    raw.close();
    const r = await runShell(`$U status --config ${shq(t.config)}`);
    expect(r.code).toBe(0);
    const widest = Math.max(...r.stdout.split('\n').map((l) => [...l].length));
    expect(widest).toBeLessThanOrEqual(100);
    expect(r.stdout).toMatch(/\d+ s ago|\d+ min ago/);
    expect(r.stdout).not.toMatch(/\d{4}-\d\d-\d\dT/);
    // No Redis configured: nothing about queues, nothing from whatever listens on 6379.
    expect(r.stdout).not.toMatch(/6379|queues|waiting|Redis/);

    const redis = await startRedis();
    onTestFinished(() => redis.stop());
    const withRedis = await runShell(`$U status --config ${shq(t.config)}`, { REDIS_URL: redis.url });
    expect(withRedis.stdout).toMatch(/^queues \(/m);
    expect(withRedis.stdout).toMatch(/waiting/);
    const down = await runShell(`$U status --config ${shq(t.config)}`, { REDIS_URL: 'redis://127.0.0.1:1' });
    const line = down.stdout.split('\n').find((l) => l.startsWith('Redis unreachable')) ?? '';
    expect(line).toMatch(/^Redis unreachable at redis:\/\/127\.0\.0\.1:1\/?: connect ECONNREFUSED/);
    expect(line.match(/unreachable/g)).toHaveLength(1);
  });
});
