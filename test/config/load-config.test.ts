import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load-config.js';
import { resolveTenants } from '../../src/config/resolve-tenants.js';

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
