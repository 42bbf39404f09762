import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { startRedis } from '../helpers/redis-server.js';
import { collect, runCli, spawnCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/sync-harness.js';

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer().listen(0, '127.0.0.1');
  await new Promise((r) => s.once('listening', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

describe('understudy worker (CLI)', () => {
  it('exits 0 on SIGTERM even while Redis is unreachable at start', async () => {
    const dir = tempDir();
    const cfg = join(dir, 'c.json');
    writeFileSync(
      cfg,
      JSON.stringify({
        baseUrl: 'http://127.0.0.1:9',
        database: join(dir, 'w.db'),
        tenants: [{ slug: 'a', apiKeyEnv: 'K' }],
      }),
    );
    const child = spawnCli(['worker', '--config', cfg], {
      env: { K: 'some-key-some-key-some-key', REDIS_URL: `redis://127.0.0.1:${await closedPort()}` },
    });
    const done = collect(child);
    let err = '';
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
    });
    await vi.waitFor(() => expect(err).toMatch(/ECONNREFUSED/), { timeout: 15_000 });
    child.kill('SIGTERM');
    const r = await done;
    expect(r.code).toBe(0);
    expect(r.stderr + r.stdout).not.toContain('some-key-some-key');
  });

  it.each([
    [[], '127.0.0.1'],
    [['--http-host', '0.0.0.0'], '0.0.0.0'],
  ])('serves --http on loopback unless --http-host says otherwise (%j)', async (extra, host) => {
    const redis = await startRedis();
    onTestFinished(() => redis.stop());
    const dir = tempDir();
    const cfg = join(dir, 'c.json');
    writeFileSync(
      cfg,
      JSON.stringify({
        baseUrl: 'http://127.0.0.1:9',
        database: join(dir, 'w.db'),
        tenants: [{ slug: 'a', apiKeyEnv: 'K', schedule: { incrementalEveryMinutes: 0, fullCron: null } }],
      }),
    );
    const child = spawnCli(['worker', '--config', cfg, '--http', '0', ...extra], {
      env: { K: 'some-key-some-key-some-key', REDIS_URL: redis.url },
    });
    const done = collect(child);
    let err = '';
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const listening = await vi.waitFor(
      () => {
        const line = err.split('\n').find((l) => l.includes('ops endpoints listening'));
        expect(line).toBeDefined();
        return JSON.parse(line as string) as { host: string; port: number };
      },
      { timeout: 30_000 },
    );
    expect(listening.host).toBe(host);
    expect((await fetch(`http://127.0.0.1:${listening.port}/healthz`)).status).toBe(200);
    // Only the binding is under test here; a clean exit on SIGTERM is the test above.
    child.kill('SIGTERM');
    await done;
  });

  it('refuses --http-host without --http', async () => {
    const r = await runCli(['worker', '--config', '/nonexistent.json', '--http-host', '0.0.0.0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--http-host needs --http/);
  });
});
