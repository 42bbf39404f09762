import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load-config.js';
import { resolveTenants } from '../../src/config/resolve-tenants.js';
import { writeConfig } from '../helpers/operator.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/sync-harness.js';

const base = (tenants: unknown[], extra: Record<string, unknown> = {}) => ({
  baseUrl: 'https://partners.example.org',
  tenants,
  ...extra,
});
const tenant = (slug: string, extra: Record<string, unknown> = {}) => ({ slug, apiKeyEnv: 'K_ONE', ...extra });
const errorOf = (fn: () => unknown): { code: string; message: string } => {
  try {
    fn();
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error('expected an error');
};

describe('schedules are validated when the config loads', () => {
  it('refuses a four-field fullCron, naming tenants.N.schedule.fullCron', () => {
    const err = errorOf(() => parseConfig(base([tenant('a'), tenant('b', { schedule: { fullCron: '0 3 * *' } })])));
    expect(err.code).toBe('US_CONFIG');
    expect(err.message).toMatch(/tenants\.1\.schedule\.fullCron: not a cron expression/);
  });

  it('refuses an unknown time zone, naming tenants.N.schedule.timezone', () => {
    const err = errorOf(() => parseConfig(base([tenant('a', { schedule: { timezone: 'Europe/Londn' } })])));
    expect(err.code).toBe('US_CONFIG');
    expect(err.message).toMatch(/tenants\.0\.schedule\.timezone: not an IANA time zone/);
  });

  it('accepts five- and six-field crons in a real time zone, and null to turn the full sync off', () => {
    const c = parseConfig(
      base([
        tenant('a', { schedule: { fullCron: '30 2 * * 1-5', timezone: 'Europe/London' } }),
        tenant('b', { schedule: { fullCron: '*/10 * * * * *' } }),
        tenant('c', { schedule: { fullCron: null } }),
      ]),
    );
    expect(c.tenants.map((t) => t.schedule?.fullCron)).toEqual(['30 2 * * 1-5', '*/10 * * * * *', null]);
  });
});

describe('baseUrl', () => {
  it.each(['ftp://127.0.0.1/x', 'file:///etc/passwd', 'not a url'])('refuses %s, naming baseUrl', (url) => {
    const err = errorOf(() => parseConfig(base([tenant('a')], { baseUrl: url })));
    expect(err.code).toBe('US_CONFIG');
    expect(err.message).toMatch(/baseUrl: /);
  });

  it('accepts http: and https:', () => {
    expect(parseConfig(base([tenant('a')], { baseUrl: 'http://127.0.0.1:8080' })).baseUrl).toBe(
      'http://127.0.0.1:8080',
    );
  });
});

describe('one key, one rateLimit', () => {
  it('refuses two tenants on one apiKeyEnv with different rateLimit, naming both', () => {
    const err = errorOf(() =>
      parseConfig(
        base([
          tenant('first-one', { rateLimit: { reads: 100, writes: 20, windowMs: 60_000 } }),
          tenant('second-one', { rateLimit: { reads: 50, writes: 20, windowMs: 60_000 } }),
        ]),
      ),
    );
    expect(err.code).toBe('US_CONFIG');
    expect(err.message).toMatch(/tenants\.1\.rateLimit: .*"first-one" and "second-one"/);
  });

  it('takes an absent rateLimit as the default one', () => {
    expect(() =>
      parseConfig(base([tenant('a'), tenant('b', { rateLimit: { reads: 100, writes: 20, windowMs: 60_000 } })])),
    ).not.toThrow();
    expect(() => parseConfig(base([tenant('a'), tenant('b', { rateLimit: { reads: 99 } })]))).toThrow(/"a" and "b"/);
  });

  it('refuses two variables holding the same key with different rateLimit once the environment is read', () => {
    const config = parseConfig(
      base([tenant('a', { apiKeyEnv: 'K_ONE' }), tenant('b', { apiKeyEnv: 'K_TWO', rateLimit: { reads: 10 } })]),
    );
    const err = errorOf(() => resolveTenants(config, { K_ONE: 'same-key-value', K_TWO: 'same-key-value' }));
    expect(err.code).toBe('US_CONFIG');
    expect(err.message).toMatch(/"a" and "b" hold the same key \(K_ONE and K_TWO\)/);
    expect(err.message).not.toMatch(/same-key-value/);
    // Different keys may have different budgets.
    expect(resolveTenants(config, { K_ONE: 'key-one', K_TWO: 'key-two' }).map((t) => t.budget.reads)).toEqual([
      100, 10,
    ]);
  });
});

describe('watch', () => {
  it('accepts true, false and an object of knobs, at the top level and per tenant', () => {
    const c = parseConfig(
      base([tenant('a', { watch: false }), tenant('b', { watch: { hot: '5s' } }), tenant('c')], {
        watch: { maxShare: 0.5, idleShare: 0.1, hot: '10s', all: '1m30s' },
      }),
    );
    expect(c.watch).toEqual({ maxShare: 0.5, idleShare: 0.1, hot: '10s', all: '1m30s' });
    expect(c.tenants.map((t) => t.watch)).toEqual([false, { hot: '5s' }, undefined]);
    expect(parseConfig(base([tenant('a', { watch: true })], { watch: false })).tenants[0]?.watch).toBe(true);
  });

  it.each([
    [{ maxShare: 0 }, 'watch.maxShare: must be above 0 (got 0)'],
    [{ maxShare: 1.5 }, 'watch.maxShare: must be at most 1 (got 1.5)'],
    [{ maxShare: '0.5' }, 'watch.maxShare: must be a number (got a string)'],
    [{ idleShare: -0.1 }, 'watch.idleShare: must be above 0 (got -0.1)'],
    [{ maxShare: 0.3, idleShare: 0.4 }, 'watch.idleShare: must not be above maxShare (idleShare 0.4, maxShare 0.3)'],
    [{ hot: 10 }, 'watch.hot: must be a duration such as "10s" or "2m" (got 10)'],
    [{ hot: '10' }, 'watch.hot: must be a duration such as "10s" or "2m" (got "10")'],
    [{ hot: 'soon' }, 'watch.hot: must be a duration such as "10s" or "2m" (got "soon")'],
    [{ hot: '1s' }, 'watch.hot: must be at least "2s" (got "1s")'],
    [{ all: 120 }, 'watch.all: must be a duration such as "10s" or "2m" (got 120)'],
    [{ hot: '2m', all: '1m' }, 'watch.all: must be at least hot (all "1m", hot "2m")'],
    [{ maxshare: 0.5 }, 'watch: unknown key "maxshare" (did you mean "maxShare"?)'],
    ['yes', 'watch: must be true, false or an object of knobs (maxShare, idleShare, hot, all)'],
  ])('refuses watch %j with exactly one line naming the field', (watch, line) => {
    const err = errorOf(() => parseConfig(base([tenant('a')], { watch })));
    expect(err.code).toBe('US_CONFIG');
    expect(err.message).toBe(`config: ${line}`);
  });

  it("names the tenant's knob, as tenants.N.watch.<knob>", () => {
    const bad = (watch: unknown) => errorOf(() => parseConfig(base([tenant('a'), tenant('b', { watch })]))).message;
    expect(bad({ maxShare: 2 })).toBe('config: tenants.1.watch.maxShare: must be at most 1 (got 2)');
    expect(bad({ all: '1x' })).toBe('config: tenants.1.watch.all: must be a duration such as "10s" or "2m" (got "1x")');
    expect(bad({ hots: '5s' })).toBe('config: tenants.1.watch: unknown key "hots" (did you mean "hot"?)');
  });

  it('refuses a bad knob from the CLI with one line on stderr and exit 2, like any config error', async () => {
    const dir = tempDir();
    const config = writeConfig(dir, 'c.json', {
      baseUrl: 'http://127.0.0.1:9',
      database: join(dir, 'mirror.db'),
      watch: { hot: '2m' },
      tenants: [{ slug: 'acme', apiKeyEnv: 'KEY_A', watch: { all: '1m' } }],
    });
    const r = await runCli(['sync', '--config', config], { env: { KEY_A: 'key' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `understudy sync: ${config}: tenants.0.watch.all: must be at least hot (all "1m", hot "2m" from the top-level watch)\n`,
    );
    expect(existsSync(join(dir, 'mirror.db'))).toBe(false);
  });
});
