import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/sync-harness.js';

/** A scratch directory with a config whose `database` lives in it, and the environment its tenants need. */
function setup(config: Record<string, unknown> = {}, tenants?: unknown[]) {
  const dir = tempDir();
  const db = join(dir, 'mirror.db');
  const path = join(dir, 'config.json');
  writeFileSync(
    path,
    JSON.stringify({
      baseUrl: 'http://127.0.0.1:9',
      database: db,
      // Nothing listens there: a command that got as far as Redis would fail differently (and slowly).
      redis: { url: 'redis://127.0.0.1:9' },
      tenants: tenants ?? [{ slug: 'alpha', apiKeyEnv: 'CF_KEY' }],
      ...config,
    }),
  );
  const env = { CF_KEY: 'cf-key-cf-key-cf-key', UNDERSTUDY_DB: db, REDIS_URL: '' };
  /** Every file the run left in the directory, besides the config. */
  const leftovers = () => readdirSync(dir).filter((f) => f !== 'config.json');
  return { dir, db, path, env, leftovers };
}

describe('a run that fails on config or usage creates no database file', () => {
  const badConfigs: [string, Record<string, unknown>, unknown[] | undefined, RegExp][] = [
    ['an ftp baseUrl', { baseUrl: 'ftp://127.0.0.1/x' }, undefined, /baseUrl: must be an http: or https: URL/],
    [
      'a four-field fullCron',
      {},
      [{ slug: 'alpha', apiKeyEnv: 'CF_KEY', schedule: { fullCron: '0 3 * *' } }],
      /tenants\.0\.schedule\.fullCron/,
    ],
    [
      'an unknown time zone',
      {},
      [{ slug: 'alpha', apiKeyEnv: 'CF_KEY', schedule: { fullCron: '0 3 * * *', timezone: 'Europe/Londn' } }],
      /tenants\.0\.schedule\.timezone/,
    ],
    [
      'one key with two rate limits',
      {},
      [
        { slug: 'alpha', apiKeyEnv: 'CF_KEY', rateLimit: { reads: 100 } },
        { slug: 'beta', apiKeyEnv: 'CF_KEY', rateLimit: { reads: 50 } },
      ],
      /"alpha" and "beta"/,
    ],
  ];
  const commands = (path: string): [string, string[]][] => [
    ['sync', ['sync', '--config', path]],
    ['sync --schedule', ['sync', '--config', path, '--schedule', '* * * * *']],
    ['sync --enqueue', ['sync', '--config', path, '--enqueue']],
    ['status', ['status', '--config', path]],
    ['worker', ['worker', '--config', path]],
    [
      'enqueue',
      ['enqueue', '--config', path, '--tenant', 'alpha', '--op', 'delete', '--collection', 'series', '--id', '1'],
    ],
    ['writes', ['writes', 'failed', '--config', path]],
    ['backup', ['backup', 'copy.db', '--config', path]],
  ];

  // Every command for the first case; sync and worker (the ones that open the mirror) for the others. One process
  // per test, so a busy machine slows each test rather than one test running many.
  const commandNames = commands('').map(([n]) => n);
  const runs = badConfigs.flatMap((c, i) =>
    (i === 0 ? commandNames : ['sync', 'worker']).map((name) => [c[0], name, c] as const),
  );
  it.each(runs)('exits 2 naming the field for %s (%s)', async (_what, name, [, config, tenants, message]) => {
    const s = setup(config, tenants);
    const args = commands(s.path).find(([n]) => n === name)?.[1] ?? [];
    const r = await runCli(args, { env: s.env });
    expect(r.code, `${name}: ${r.stderr}`).toBe(2);
    expect(r.stderr, name).toMatch(message);
    expect(s.leftovers(), name).toEqual([]);
  });

  const usageErrors = (p: string, db: string): string[][] => [
    ['sync', '--config', p, '--collection', 'nope'],
    ['sync', '--config', p, '--schedule', '0 3 * *'],
    ['sync', '--config', p, '--enqueue', '--schedule', '* * * * *'],
    ['sync', '--config', p, '--tenant', 'not-there'],
    ['sync', '--base-url', 'ftp://127.0.0.1/x', '--tenant', 'alpha', '--db', db],
    ['sync', '--config', p, '--base-url', 'gopher://x'],
    ['worker', '--config', p, '--concurrency', '0'],
    ['worker'],
    ['enqueue', '--config', p, '--tenant', 'alpha', '--op', 'frob', '--collection', 'series'],
    ['enqueue', '--config', p, '--tenant', 'nobody', '--op', 'delete', '--collection', 'series', '--id', '1'],
    ['writes', 'bogus', '--config', p],
    ['backup', '--config', p],
    ['sql', '--db', db, '--json', '--csv', 'SELECT 1'],
    ['sql', '--db', db, 'SELECT 1'],
    ['status', '--config', p, '--nope'],
  ];
  it.each(usageErrors('CONFIG', 'DB').map((a, i) => [a.join(' '), i] as const))(
    'exits 2 on a usage error with a good config, leaving no database behind: %s',
    async (_shown, i) => {
      const s = setup();
      const args = usageErrors(s.path, s.db)[i] ?? [];
      const r = await runCli(args, { env: s.env });
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(s.leftovers(), args.join(' ')).toEqual([]);
    },
  );

  it('exits 2 when a tenant key variable is unset, before any database is opened', async () => {
    const s = setup();
    const env = { ...s.env, CF_KEY: '' };
    for (const args of [
      ['sync', '--config', s.path],
      ['worker', '--config', s.path],
    ]) {
      const r = await runCli(args, { env });
      expect(r.code, `${args[0]}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(/CF_KEY/);
      expect(existsSync(s.db)).toBe(false);
    }
  });
});
