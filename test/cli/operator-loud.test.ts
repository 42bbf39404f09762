import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { holdRequest } from '../helpers/hold-request.js';
import { closedPort, rowsOf, runShell, shq, tenantConfig, twoTenantSim, writeConfig } from '../helpers/operator.js';
import { startRedis } from '../helpers/redis-server.js';
import { tempDir } from '../helpers/sync-harness.js';
import { startWorker } from '../helpers/understudy-process.js';

const lines = (s: string) => s.split('\n').filter((l) => l.trim() !== '');

describe('loud and precise: a run that could not do its job says so', () => {
  it('a baseUrl with a wrong path (every route 404) fails naming baseUrl, instead of 13 skipped collections', async () => {
    const { sim, a } = await twoTenantSim();
    const dir = tempDir();
    const config = writeConfig(dir, 'c.json', {
      baseUrl: `${sim.url}/wrong`,
      database: join(dir, 'm.db'),
      tenants: [{ slug: a.slug, apiKeyEnv: 'KEY_A' }],
    });
    const r = await runShell(`$U sync --config ${shq(config)} --quiet`, { KEY_A: a.key });
    expect(r.code).toBe(1);
    expect(lines(r.stderr)).toEqual([
      expect.stringMatching(
        new RegExp(`^understudy sync: tenant ${a.slug}: baseUrl ${sim.url}/wrong: nothing could be read: .*404`),
      ),
    ]);
  });

  it("a baseUrl ending in Payload's own /api (every route 403) is called a wrong baseUrl, not a refused key", async () => {
    const { sim, a } = await twoTenantSim();
    const dir = tempDir();
    const config = writeConfig(dir, 'c.json', {
      baseUrl: `${sim.url}/api`,
      database: join(dir, 'm.db'),
      tenants: [{ slug: a.slug, apiKeyEnv: 'KEY_A' }],
    });
    const r = await runShell(`$U sync --config ${shq(config)} --quiet`, { KEY_A: a.key });
    expect(r.code).toBe(1);
    expect(lines(r.stderr)).toEqual([
      expect.stringMatching(new RegExp(`^understudy sync: tenant ${a.slug}: baseUrl ${sim.url}/api looks wrong: `)),
    ]);
    expect(r.stderr).toContain(`baseUrl should be the Partners API's origin, e.g. ${sim.url}`);
    expect(r.stderr).toContain('403');
    expect(r.stderr).not.toMatch(/refused the key/);
    expect(r.stderr).not.toMatch(/\.\./);
  });

  it('a refused key names the tenant and its apiKeyEnv, says the slug may be wrong, and the other tenant still runs: exit 3', async () => {
    const { sim, a, b } = await twoTenantSim();
    const dir = tempDir();
    const { config, db } = tenantConfig(dir, sim.url, [
      { slug: a.slug, apiKeyEnv: 'WRONG_KEY' },
      { slug: b.slug, apiKeyEnv: 'KEY_B' },
    ]);
    const wrong = 'sk_NotTheKey0000000000000000000000';
    const r = await runShell(`$U sync --config ${shq(config)} --quiet`, { WRONG_KEY: wrong, KEY_B: b.key });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(new RegExp(`tenant ${a.slug}: the upstream refused the key in WRONG_KEY`));
    expect(r.stderr).toMatch(/slug may be wrong/);
    expect(r.stderr).not.toContain(wrong);
    expect(rowsOf(db, 'series', b.slug)).toBeGreaterThan(0);

    // A misspelt slug is refused the same way, and says so.
    const misspelt = writeConfig(dir, 'm.json', {
      baseUrl: sim.url,
      database: join(dir, 'm2.db'),
      tenants: [
        { slug: `${a.slug}x`, apiKeyEnv: 'KEY_A' },
        { slug: b.slug, apiKeyEnv: 'KEY_B' },
      ],
    });
    const m = await runShell(`$U sync --config ${shq(misspelt)} --json`, { KEY_A: a.key, KEY_B: b.key });
    expect(m.code).toBe(3);
    expect(m.stderr).toMatch(new RegExp(`tenant ${a.slug}x: .*KEY_A.*slug "${a.slug}x": the slug may be wrong`));
    const out = JSON.parse(m.stdout) as { tenants: { slug: string; error?: string; collections: unknown[] }[] };
    expect(out.tenants.map((t) => [t.slug, t.error === undefined])).toEqual([
      [`${a.slug}x`, false],
      [b.slug, true],
    ]);
    expect(rowsOf(join(dir, 'm2.db'), 'series', b.slug)).toBeGreaterThan(0);
  });

  it('an unreachable upstream is named by host, port and cause, and no collection the run was not asked for', async () => {
    const port = await closedPort();
    const dir = tempDir();
    const config = writeConfig(dir, 'c.json', {
      baseUrl: `http://127.0.0.1:${port}`,
      database: join(dir, 'm.db'),
      tenants: [{ slug: 'acme', apiKeyEnv: 'KEY_A' }],
    });
    const r = await runShell(`$U sync --config ${shq(config)} --collection series --quiet`, {
      KEY_A: 'sk_x'.repeat(8),
    });
    expect(r.code).toBe(4);
    // --quiet: the one readable line, no JSON log line of the retries before it.
    expect(lines(r.stderr)).toHaveLength(1);
    const last = lines(r.stderr).at(-1) ?? '';
    expect(last).toContain(`127.0.0.1:${port}`);
    expect(last).toMatch(/ECONNREFUSED.*connection refused/);
    expect(last).not.toMatch(/pages/);
  });

  it('an upstream that dies mid-sync stops the tenant after the first collection that found it gone: one line, exit 4', async () => {
    // Issue 37, item 3: one error line per remaining collection, each after its own retries (7 lines, 74 s).
    const { sim, a } = await twoTenantSim();
    const dir = tempDir();
    const { config, db } = tenantConfig(dir, sim.url, [{ slug: a.slug, apiKeyEnv: 'KEY_A' }]);
    const first = await runShell(`$U sync --config ${shq(config)} --quiet`, { KEY_A: a.key });
    expect(first.code, first.stderr).toBe(0);
    const held = holdRequest(sim, 1, '/events');
    const run = runShell(`$U sync --config ${shq(config)} --full --quiet`, { KEY_A: a.key });
    await held.reached;
    await sim.close();
    held.release();
    const r = await run;
    expect(r.code, r.stderr).toBe(4);
    expect(lines(r.stderr), r.stderr).toEqual([
      expect.stringMatching(new RegExp(`^understudy sync: tenant ${a.slug}: cannot reach the upstream .*ECONNREFUSED`)),
    ]);
    // What was mirrored before stays.
    expect(rowsOf(db, 'series', a.slug)).toBeGreaterThan(0);
  });

  it('--quiet prints only the readable line for an unreachable Redis and for a refused key, no JSON log line', async () => {
    const { sim, a } = await twoTenantSim();
    const dir = tempDir();
    const { config } = tenantConfig(dir, sim.url, [{ slug: a.slug, apiKeyEnv: 'KEY_A' }]);
    const redisPort = await closedPort();
    const r = await runShell(`$U sync --config ${shq(config)} --quiet`, {
      KEY_A: a.key,
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    });
    expect(r.code).not.toBe(0);
    expect(lines(r.stderr), r.stderr).toEqual([expect.stringMatching(new RegExp(`^understudy sync: .*${redisPort}`))]);
    const refused = await runShell(`$U sync --config ${shq(config)} --quiet`, {
      KEY_A: 'sk_NotTheKey0000000000000000000000',
    });
    expect(refused.code).toBe(3);
    expect(lines(refused.stderr), refused.stderr).toEqual([expect.stringMatching(/refused the key in KEY_A/)]);
  });

  it('a key pasted into apiKeyEnv is refused (exit 2) and never echoed, by sync, by the worker, and by a reload', async () => {
    const redis = await startRedis();
    onTestFinished(() => redis.stop());
    const pasted = 'sk_PastedByMistake9Qz7LmN2pR4wXyZ';
    const dir = tempDir();
    const config = writeConfig(dir, 'c.json', {
      baseUrl: 'http://127.0.0.1:9',
      database: join(dir, 'm.db'),
      tenants: [{ slug: 'acme', apiKeyEnv: pasted }],
    });
    for (const cmd of ['sync', 'worker', 'status']) {
      const r = await runShell(`$U ${cmd} --config ${shq(config)}`, { REDIS_URL: redis.url });
      expect(r.code, cmd).toBe(2);
      expect(r.stderr).toMatch(/tenants\.0\.apiKeyEnv: must name an environment variable/);
      expect(r.stdout + r.stderr).not.toContain(pasted);
    }

    // A running worker whose config gets the pasted key refuses the reload, and its log never prints it.
    const good = { baseUrl: 'http://127.0.0.1:9', database: join(dir, 'w.db') };
    const tenant = { slug: 'acme', schedule: { incrementalEveryMinutes: 0, fullCron: null } };
    const live = writeConfig(dir, 'live.json', { ...good, tenants: [{ ...tenant, apiKeyEnv: 'KEY_A' }] });
    const worker = startWorker(live, [], { KEY_A: 'sk_some-key-some-key', REDIS_URL: redis.url });
    await worker.waitForLog(/worker starting/);
    writeConfig(dir, 'live.json', { ...good, tenants: [{ ...tenant, apiKeyEnv: pasted }] });
    worker.child.kill('SIGHUP');
    await worker.waitForLog(/config reload refused/);
    const r = await worker.stop();
    expect(r.stderr).toMatch(/apiKeyEnv: must name an environment variable/);
    expect(r.stdout + r.stderr).not.toContain(pasted);
  });
});
