import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/understudy', import.meta.url));

/** Runs the built CLI (`npm test` builds first), as `npm run demo` does. */
const cli = (...args: string[]) =>
  spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, LOG_LEVEL: 'warn' },
  });

describe('understudy demo', () => {
  it('is listed among the commands and explains itself with --help', () => {
    expect(cli('--help').stdout).toMatch(/^ {2}demo {7}/m);
    const help = cli('demo', '--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^usage: understudy demo/);
  });

  it('mirrors the simulator into a temporary file and answers the sample query', () => {
    const run = cli('demo');
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^Simulator at http:\/\/127\.0\.0\.1:\d+ with tenants /);
    expect(run.stdout).toContain('$ understudy sync --config ');
    expect(run.stdout).toContain('$ understudy sql --db ');
    expect(run.stdout).toMatch(/\(8 rows\)\n$/);
  }, 130_000);

  it('refuses an unknown flag as a usage error', () => {
    expect(cli('demo', '--nope').status).toBe(2);
  });
});
