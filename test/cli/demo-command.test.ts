import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { invokedAs } from '../../src/cli/demo-command.js';

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
    expect(help.stdout).toMatch(/^Usage: understudy demo/);
  });

  it('shows upcoming performances around today with their tenant, a search, and next steps that work', () => {
    const run = cli('demo');
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const out = run.stdout;
    const [, tenants = ''] = /^Simulator at http:\/\/127\.0\.0\.1:\d+ with tenants (\S+, \S+) /.exec(out) ?? [];
    // Commands are shown as `understudy …`, after an alias to the command as invoked (`bin/understudy` from the
    // project's folder, nothing being on PATH after npm ci): the alias is the first line to paste.
    const lines = out.split('\n').filter((l) => l.startsWith('$ '));
    expect(lines[0]).toBe('$ alias understudy=bin/understudy');
    expect(lines[1]).toMatch(/^\$ understudy sync --config /);
    const upcoming = out.slice(out.indexOf('$ understudy sql --db '), out.indexOf('$ understudy search'));
    expect(upcoming).toContain('(10 rows)');
    // A local date may be the day before today's UTC date (19:30 in Los Angeles is 03:30Z the next day).
    const today = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const dates = [...upcoming.matchAll(/\n\S+ +(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2} /g)].map(
      (m) => m[1],
    );
    expect(dates).toHaveLength(10);
    expect(dates.every((d) => d! >= today)).toBe(true);
    expect(tenants.split(', ').some((t) => upcoming.includes(`\n${t} `))).toBe(true);
    expect(out).toMatch(/\$ understudy search --db \S+ .+\nrank +collection +tenant +id +title +snippet\n/);
    expect(out).not.toMatch(/\(0 rows\)/);
    // Every command it shows still works once it has exited: the mirror is kept.
    const [, kept = ''] = /The mirror is kept at (\S+) \(remove (\S+) when done\)/.exec(out) ?? [];
    onTestFinished(() => rmSync(kept.replace(/\/demo\.db$/, ''), { recursive: true, force: true }));
    const commands = out.split('\n').filter((l) => /^\$ understudy (sql|search) /.test(l));
    expect(commands.length).toBeGreaterThanOrEqual(6);
    // Pasted as printed, the alias first, into an interactive shell in the folder the demo ran in (issue 37, item 11).
    for (const c of commands) {
      const r = spawnSync('bash', ['-ic', `${(lines[0] as string).slice(2)}\n${c.slice(2)}`], {
        encoding: 'utf8',
        cwd: process.cwd(),
      });
      expect([c, r.status]).toEqual([c, 0]);
    }
  }, 130_000);

  it('shows itself as invoked: a path below the folder it runs in, its whole path from elsewhere, the name on PATH when installed', () => {
    expect(invokedAs('/work/p/bin/understudy', '/work/p')).toBe('bin/understudy');
    expect(invokedAs('/work/p/bin/understudy', '/work/p/bin')).toBe('./understudy');
    expect(invokedAs('/work/p/bin/understudy', '/tmp')).toBe('/work/p/bin/understudy');
    expect(invokedAs('/usr/lib/node_modules/understudy/bin/understudy', '/home/me')).toBe('understudy');
    expect(invokedAs(undefined, '/home/me')).toBe('understudy');
  });

  it('refuses an unknown flag as a usage error', () => {
    expect(cli('demo', '--nope').status).toBe(2);
  });
});
