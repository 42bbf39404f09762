import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startSimulator } from '../../src/sim/start-simulator.js';
import { writeConfig } from '../helpers/operator.js';
import { startRedis } from '../helpers/redis-server.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/sync-harness.js';

// README: `--quiet` prints "nothing on success but what --json asks for". Every command that finishes on its own,
// run with --quiet on a healthy mirror, prints nothing at all, on stdout or stderr (issue 37, item 1), so a cron
// job mails nothing while all is well.

describe('every command with --quiet on a healthy mirror', () => {
  it('prints nothing, on stdout or stderr, and exits 0', async () => {
    const redis = await startRedis();
    onTestFinished(() => redis.stop());
    const sim = await startSimulator({ port: 0, readLimit: 0, writeLimit: 0, records: 8, seed: 37 });
    onTestFinished(() => sim.close());
    const t = sim.tenants[0];
    if (!t) throw new Error('no tenant');
    const dir = tempDir();
    const config = writeConfig(dir, 'c.json', {
      baseUrl: sim.url,
      database: join(dir, 'm.db'),
      redis: { url: redis.url, prefix: 'quiet' },
      // The simulator's limits are off, and the key's budget says so: the 17 runs here, full passes and checks, read
      // more than the default 100 a minute, and would wait at the gate for most of a minute.
      tenants: [{ slug: t.slug, apiKeyEnv: 'KEY_Q', rateLimit: { reads: 100_000 } }],
    });
    const env = { KEY_Q: t.key, REDIS_URL: redis.url };
    const first = await runCli(['sync', '--config', config, '--full', '--quiet'], { env });
    expect(first.code, first.stderr).toBe(0);
    const commands: string[][] = [
      ['sync'],
      ['sync', '--full'],
      ['check'],
      ['check', '--counts'],
      ['check', '--repair'],
      ['-q', 'check', '--counts'],
      ['changes', '--since', '0'],
      ['status'],
      ['status', '--check'],
      ['sql', 'SELECT count(*) FROM series'],
      ['sql', '--tables'],
      ['search', 'opera'],
      ['writes', 'failed'],
      ['webhooks', 'failed'],
      ['webhooks', 'retry', '--all'],
      ['backup', join(dir, 'copy.db')],
    ];
    const seen: string[] = [];
    for (const argv of commands) {
      const quiet = argv.includes('-q') ? argv : [...argv, '--quiet'];
      const r = await runCli([...quiet, '--config', config], { env });
      seen.push(
        `${argv.join(' ')}: exit ${r.code}, stdout ${JSON.stringify(r.stdout)}, stderr ${JSON.stringify(r.stderr)}`,
      );
    }
    expect(seen).toEqual(commands.map((argv) => `${argv.join(' ')}: exit 0, stdout "", stderr ""`));
  }, 180_000);
});
