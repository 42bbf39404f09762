import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rowsOf, runShell, shq, twoTenantSim, writeConfig } from '../helpers/operator.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/sync-harness.js';

const version = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

describe('a CLI like its peers', () => {
  it('--version and -V print the version; help <command> is that command’s help, generated from its flags', async () => {
    for (const flag of ['--version', '-V']) {
      const r = await runCli([flag]);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`understudy ${version}\n`);
    }
    const general = await runCli(['--help']);
    expect(general.stdout).toMatch(/--quiet/);
    expect(general.stdout).toMatch(/help \[command\]/);
    const sync = await runCli(['help', 'sync']);
    expect(sync.code).toBe(0);
    expect(sync.stdout).toMatch(/^Usage: understudy sync/);
    expect(sync.stdout).toMatch(/--collection <NAME>/);
    expect(sync.stdout).toMatch(/--schedule \[CRON\]/);
    expect(sync.stdout).toMatch(/--wait <SECONDS>/);
    expect(sync.stdout).not.toMatch(/Partners API simulator/);
    expect((await runCli(['sync', '--help'])).stdout).toBe(sync.stdout);
    const status = await runCli(['help', 'status']);
    expect(status.stdout).toMatch(/--check/);
    expect(status.stdout).toMatch(/--max-age <DURATION>/);
    expect((await runCli(['sql', '--help'])).stdout).toMatch(/--config <FILE>/);
  });

  it('says "did you mean" for a misspelt command, flag or config key, exiting 2', async () => {
    const cmd = await runCli(['synk']);
    expect(cmd.code).toBe(2);
    expect(cmd.stderr).toMatch(/unknown command "synk" \(did you mean "sync"\?\)/);
    const flag = await runCli(['sync', '--colection', 'series']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toBe("understudy sync: unknown option '--colection' (did you mean --collection?)\n");
    const dir = tempDir();
    const config = writeConfig(dir, 'c.json', {
      baseUrl: 'http://127.0.0.1:9',
      tenants: [{ slug: 'acme', apikeyEnv: 'KEY_A' }],
    });
    const key = await runCli(['sync', '--config', config]);
    expect(key.code).toBe(2);
    expect(key.stderr).toMatch(/tenants\.0: unknown key "apikeyEnv" \(did you mean "apiKeyEnv"\?\)/);
    expect(key.stderr).toMatch(/tenants\.0\.apiKeyEnv: missing \(required\)/);
    expect(key.stderr).not.toMatch(/Expected never|received/);
  });

  it('gives a JSON syntax error in the config as line and column', async () => {
    const dir = tempDir();
    const path = join(dir, 'c.json');
    writeFileSync(path, '{\n  "baseUrl": "http://127.0.0.1:9",\n  "database": "x.db"\n  "tenants": []\n}\n');
    const r = await runCli(['status', '--config', path]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`${path}:4:3: not valid JSON \\(line 4, column 3\\)`));
  });

  it('exits 2 for an unknown flag on every command, through the one exit-code map', async () => {
    for (const cmd of ['sync', 'status', 'sql', 'backup', 'enqueue', 'writes', 'worker', 'sim', 'demo']) {
      const r = await runCli([cmd, '--no-such-flag']);
      expect(r.code, cmd).toBe(2);
      expect(r.stderr).toBe(`understudy ${cmd}: unknown option '--no-such-flag'\n`);
    }
  });

  it('reads a relative database from the config file’s folder, whatever the current directory (sync, sql)', async () => {
    const { sim, a } = await twoTenantSim();
    const dir = tempDir();
    mkdirSync(join(dir, 'cfg'));
    mkdirSync(join(dir, 'elsewhere'));
    writeConfig(join(dir, 'cfg'), 'u.json', {
      baseUrl: sim.url,
      database: './data/rel.db',
      tenants: [{ slug: a.slug, apiKeyEnv: 'KEY_A' }],
    });
    const cwd = join(dir, 'elsewhere');
    const sync = await runShell('$U sync --config ../cfg/u.json --collection series --quiet', { KEY_A: a.key }, cwd);
    expect(sync.code, sync.stderr).toBe(0);
    expect(rowsOf(join(dir, 'cfg', 'data', 'rel.db'), 'series', a.slug)).toBeGreaterThan(0);
    expect(existsSync(join(cwd, 'data'))).toBe(false);
    const sql = await runShell('$U sql --config ../cfg/u.json --csv "SELECT count(*) AS n FROM series"', {}, cwd);
    expect(sql.stdout).toMatch(/^n\r\n[1-9]\d*\r\n$/);
    // --db, like UNDERSTUDY_DB, is read from the current directory.
    const flags = await runShell(
      `$U sync --base-url ${shq(sim.url)} --tenant ${a.slug} --collection series --db ./cwd.db --quiet`,
      { PARTNERS_API_KEY: a.key },
      cwd,
    );
    expect(flags.code, flags.stderr).toBe(0);
    expect(existsSync(join(cwd, 'cwd.db'))).toBe(true);
  });

  it('backup creates the target’s folder, and refuses to write onto the mirror it copies, even with --force', async () => {
    const { sim, a } = await twoTenantSim();
    const dir = tempDir();
    const db = join(dir, 'm.db');
    const config = writeConfig(dir, 'c.json', {
      baseUrl: sim.url,
      database: db,
      tenants: [{ slug: a.slug, apiKeyEnv: 'KEY_A' }],
    });
    expect((await runShell(`$U sync --config ${shq(config)} --quiet`, { KEY_A: a.key })).code).toBe(0);
    const deep = join(dir, 'new', 'deeper', 'b.db');
    const made = await runShell(`$U backup --config ${shq(config)} ${shq(deep)}`);
    expect(made.code, made.stderr).toBe(0);
    expect(rowsOf(deep, 'series', a.slug)).toBe(rowsOf(db, 'series', a.slug));
    const inode = statSync(db).ino;
    for (const onto of [join(dir, '.', 'm.db'), `${db}-wal`]) {
      const r = await runShell(`$U backup --config ${shq(config)} --force ${shq(onto)}`);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/is the mirror being copied/);
    }
    expect(statSync(db).ino).toBe(inode);
    expect(rowsOf(db, 'series', a.slug)).toBeGreaterThan(0);
  });
});
