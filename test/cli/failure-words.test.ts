import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliHarness } from '../helpers/cli-harness.js';
import { BIN, type CliResult, collect, runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/sync-harness.js';

// What a user sees when something is off (issue 28): the words on stderr and the exit code, from the built CLI
// (`npm run build` first; `npm test` does).

/** The one line of stderr, failing the test when there are more. */
const oneLine = (r: CliResult): string => {
  const lines = r.stderr.trim().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  return lines[0] as string;
};

describe('unset key variables', () => {
  it('names every unset variable at once, exit 2', async () => {
    const dir = tempDir();
    const config = join(dir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        baseUrl: 'http://127.0.0.1:9',
        database: join(dir, 'm.db'),
        tenants: [
          { slug: 'alpha', apiKeyEnv: 'ALPHA_KEY' },
          { slug: 'beta', apiKeyEnv: 'BETA_KEY' },
          { slug: 'gamma', apiKeyEnv: 'GAMMA_KEY' },
        ],
      }),
    );
    const env = { ALPHA_KEY: '', BETA_KEY: '', GAMMA_KEY: 'gamma-key-gamma-key', REDIS_URL: '' };
    const r = await runCli(['sync', '--config', config, '--quiet'], { env });
    expect(r.code, r.stderr).toBe(2);
    const line = oneLine(r);
    expect(line).toContain('ALPHA_KEY (tenant alpha)');
    expect(line).toContain('BETA_KEY (tenant beta)');
    expect(line).not.toContain('GAMMA_KEY');
  });
});

describe('--env-file, as `understudy` is run (bin/understudy as a program)', () => {
  /** bin/understudy run as a program, as a shell, cron or npm's bin link runs it (not `node bin/understudy`). */
  const runBin = (args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> => {
    const child = spawn(BIN, args, { env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: 'pipe' });
    child.stdin.end();
    return collect(child);
  };

  it("is understudy's to read: a missing file is one line of its own, exit 2, never Node's `node: …: not found`", async () => {
    const missing = join(tempDir(), 'nokeys.env');
    for (const args of [
      ['sync', '--config', 'understudy.json', '--env-file', missing],
      ['--env-file', missing, 'status'],
      ['sync', `--env-file=${missing}`],
    ]) {
      const r = await runBin(args, {});
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      const line = oneLine(r);
      expect(line).toMatch(/^understudy (sync|status): --env-file .*nokeys\.env: cannot read it \(no such file\)$/);
    }
  });

  it('gives the keys in the file to the command', async () => {
    const h = await cliHarness();
    const file = join(h.dir, 'keys.env');
    writeFileSync(file, `K=${h.t.key}\n`);
    const r = await runBin(['sync', '--config', h.config, '--collection', 'venues', '--env-file', file, '--quiet'], {
      K: '',
      REDIS_URL: '',
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
  });
});

describe('search words that start with -', () => {
  it('reads every operand after the first as a word, and says how to search a word starting with - first', async () => {
    const h = await cliHarness();
    expect((await h.cli('sync', '--collection', 'events')).code).toBe(0);
    const title = String(h.sim.controls.docs(h.t.slug, 'events')[0]?.title);
    const word = title.split(' ').find((w) => /^[A-Za-z]{4,}$/.test(w)) ?? title;
    const words = await h.cli('search', `"${word}`, 'OR', '-lake', '--json');
    expect(words.code, words.stderr).toBe(0);
    expect(JSON.parse(words.stdout)).toEqual([]);
    const dashed = await runCli(['search', '--config', h.config, '--', '-lake'], { env: h.env });
    expect(dashed.code, dashed.stderr).toBe(0);
    const first = await h.cli('search', '-lake');
    expect(first.code).toBe(2);
    expect(oneLine(first)).toContain('understudy search -- -lake');
    // Two dashes are a misspelt flag far more often than a word: named, with the flag meant.
    const typo = await h.cli('search', word, '--lmit', '3');
    expect(typo.code).toBe(2);
    expect(oneLine(typo)).toBe("understudy search: unknown option '--lmit' (did you mean --limit?)");
  });
});

describe('collections named by their table', () => {
  it('takes event_instances wherever a collection is named, and suggests the right name for a misspelt one', async () => {
    const h = await cliHarness({}, { collections: ['event_instances', 'events', 'venues'] });
    const synced = await h.cli('sync', '--collection', 'event_instances', '--json');
    expect(synced.code, synced.stderr).toBe(0);
    expect(synced.stdout).toContain('"event-instances"');
    const byTable = await h.cli('changes', '--collection', 'event_instances', '--json');
    const byPath = await h.cli('changes', '--collection', 'event-instances', '--json');
    expect(byTable.code, byTable.stderr).toBe(0);
    expect(JSON.parse(byTable.stdout).length).toBeGreaterThan(0);
    expect(byTable.stdout).toBe(byPath.stdout);
    const typo = await h.cli('changes', '--collection', 'event_instance');
    expect(typo.code).toBe(2);
    expect(oneLine(typo)).toContain('did you mean "event-instances"?');
  });
});

describe('help says PostgreSQL works', () => {
  it('in the general help and on the sync line, and on every --db flag', async () => {
    const general = await runCli(['--help']);
    expect(general.code).toBe(0);
    const [head] = general.stdout.split(/^Options:/m);
    expect(head).toMatch(/PostgreSQL/);
    expect(general.stdout).toMatch(/^ +sync +.*PostgreSQL/m);
    for (const command of ['sync', 'status', 'changes', 'search', 'sql']) {
      const help = await runCli(['help', command]);
      // The --db line and the lines that continue it.
      const db = /^ +--db .*(\n {8,}\S.*)*/m.exec(help.stdout)?.[0].replace(/\s+/g, ' ');
      expect(db, `${command}: ${help.stdout}`).toMatch(/postgres:\/\/ URL/);
    }
  });
});
