import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { closedPort, writeConfig } from '../helpers/operator.js';
import { startRedis } from '../helpers/redis-server.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/sync-harness.js';
import { startWorker } from '../helpers/understudy-process.js';

const KEY = 'some-key-some-key-some-key';

/** A worker's config with one tenant (no schedules when `quiet`), its mirror in a fresh folder. */
const workerConfig = (quiet = false): string => {
  const dir = tempDir();
  const schedule = quiet ? { schedule: { incrementalEveryMinutes: 0, fullCron: null } } : {};
  return writeConfig(dir, 'c.json', {
    baseUrl: 'http://127.0.0.1:9',
    database: join(dir, 'w.db'),
    tenants: [{ slug: 'a', apiKeyEnv: 'K', ...schedule }],
  });
};

describe('understudy worker (CLI)', () => {
  it('exits 0 on SIGTERM even while Redis is unreachable at start', async () => {
    const w = startWorker(workerConfig(), [], { K: KEY, REDIS_URL: `redis://127.0.0.1:${await closedPort()}` });
    await w.waitForLog(/ECONNREFUSED/, 15_000);
    const r = await w.stop();
    expect(r.code).toBe(0);
    expect(r.stderr + r.stdout).not.toContain('some-key-some-key');
  });

  it('gives up on a Redis unreachable at its first start after worker.redisStartTimeoutMs: one line, exit 1', async () => {
    const dir = tempDir();
    const config = writeConfig(dir, 'c.json', {
      baseUrl: 'http://127.0.0.1:9',
      database: join(dir, 'w.db'),
      worker: { redisStartTimeoutMs: 2000 },
      tenants: [{ slug: 'a', apiKeyEnv: 'K' }],
    });
    const port = await closedPort();
    const r = await runCli(['worker', '--config', config, '--quiet'], {
      env: { K: KEY, REDIS_URL: `redis://127.0.0.1:${port}` },
    });
    expect(r.code).toBe(1);
    const lines = r.stderr.split('\n').filter((l) => l.trim() !== '');
    expect(lines, r.stderr).toEqual([
      expect.stringMatching(
        new RegExp(
          `^understudy worker: Redis unreachable at redis://127.0.0.1:${port}: no connection within 2 s of starting .*ECONNREFUSED.*worker.redisStartTimeoutMs`,
        ),
      ),
    ]);
  });

  it('with Redis down, logs one line per back-off (not one per connection), each naming the cause and the delay', async () => {
    const w = startWorker(workerConfig(), [], { K: KEY, REDIS_URL: `redis://127.0.0.1:${await closedPort()}` });
    const about = () =>
      w
        .log()
        .split('\n')
        .filter((l) => l.startsWith('{') && /redis|ECONNREFUSED|connect|retry|back.?off/i.test(l))
        .map((l) => JSON.parse(l) as { msg: string; retryInMs?: number; attempt?: number });
    const backoffs = () => about().filter((l) => l.retryInMs !== undefined);
    await vi.waitFor(() => expect(backoffs().length).toBeGreaterThanOrEqual(4), { timeout: 30_000 });
    await w.stop();
    expect(backoffs().map((l) => l.attempt)).toEqual(backoffs().map((_, i) => i + 1));
    expect(backoffs()[0]?.msg).toMatch(
      /^Redis unreachable \(connect ECONNREFUSED [\d.]+:\d+\); next attempt in 200 ms$/,
    );
    // Nothing else about the outage (the queues' and workers' own connections do not repeat it) but the one line
    // at stop, which then closes the connection rather than wait for Redis.
    const others = about().filter((l) => l.retryInMs === undefined);
    expect(others.map((l) => l.msg).sort()).toEqual([
      expect.stringMatching(/^Redis unreachable at stop \(connect ECONNREFUSED [\d.]+:\d+\): /),
      'worker starting',
    ]);
  });

  it.each([
    [[], '127.0.0.1'],
    [['--http-host', '0.0.0.0'], '0.0.0.0'],
  ])('serves --http on loopback unless --http-host says otherwise (%j)', async (extra, host) => {
    const redis = await startRedis();
    onTestFinished(() => redis.stop());
    const w = startWorker(workerConfig(true), ['--http', '0', ...extra], { K: KEY, REDIS_URL: redis.url });
    const listening = await w.opsPort();
    expect(listening.host).toBe(host);
    expect((await fetch(`http://127.0.0.1:${listening.port}/healthz`)).status).toBe(200);
    // Only the binding is under test here; a clean exit on SIGTERM is the test above.
    await w.stop();
  });

  it('refuses --http-host without --http', async () => {
    const r = await runCli(['worker', '--config', '/nonexistent.json', '--http-host', '0.0.0.0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--http-host needs --http/);
  });
});
