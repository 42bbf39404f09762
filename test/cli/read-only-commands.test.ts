import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startSimulator } from '../../src/sim/start-simulator.js';
import { BIN, type CliResult, collect, runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/sync-harness.js';

// Commands that only read (status, sql, backup's source, writes' listings) open the mirror read-only: they never
// create, migrate or change it, and they read a mirror nobody may write (issue 16).

const sha1 = (path: string) => createHash('sha1').update(readFileSync(path)).digest('hex');
const schemaObjects = (path: string) => {
  const d = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return (d.prepare('SELECT count(*) AS n FROM sqlite_master').get() as { n: number }).n;
  } finally {
    d.close();
  }
};
/** Redis that nobody listens on: status must still report the mirror. */
const DEAD_REDIS = { REDIS_URL: 'redis://127.0.0.1:1' };

/** A mirror with series synced from a simulator, through the CLI. */
async function syncedMirror(dir: string): Promise<string> {
  const sim = await startSimulator({ port: 0, readLimit: 0, writeLimit: 0, records: 12, tenants: 1 });
  onTestFinished(() => sim.close());
  const t = sim.tenants[0];
  if (!t) throw new Error('simulator has no tenant');
  const db = join(dir, 'mirror.db');
  const r = await runCli(['sync', '--base-url', sim.url, '--tenant', t.slug, '--db', db, '--collection', 'series'], {
    env: { PARTNERS_API_KEY: t.key },
  });
  expect(r.code, r.stderr).toBe(0);
  return db;
}

describe('read-only commands never create or change a mirror', () => {
  it('status, sql and backup on a missing --db fail with one line and leave no file or folder behind', async () => {
    const dir = tempDir();
    const missing = join(dir, 'nodir', 'missing.db');
    for (const args of [
      ['status', '--db', missing],
      ['status', '--db', missing, '--json'],
      ['sql', '--db', missing, 'select 1'],
      ['backup', join(dir, 'copy.db'), '--db', missing],
    ]) {
      const r = await runCli(args, { env: DEAD_REDIS });
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.stderr, args.join(' ')).toMatch(/does not exist/);
      expect(existsSync(join(dir, 'nodir')), args.join(' ')).toBe(false);
    }
    expect(existsSync(join(dir, 'copy.db'))).toBe(false);
  });

  it('status and sql leave an SQLite file that is not a mirror exactly as it was', async () => {
    const dir = tempDir();
    const plain = join(dir, 'plain.db');
    const d = new Database(plain);
    d.exec('CREATE TABLE check_probe(x); INSERT INTO check_probe VALUES (1)');
    d.close();
    const before = sha1(plain);
    const status = await runCli(['status', '--db', plain], { env: DEAD_REDIS });
    expect(status.code).not.toBe(0);
    expect(status.stderr).toMatch(/not an understudy mirror/);
    const sql = await runCli(['sql', '--db', plain, '--json', 'select x from check_probe']);
    expect(sql.code, sql.stderr).toBe(0);
    expect(JSON.parse(sql.stdout)).toEqual([{ x: 1 }]);
    expect(schemaObjects(plain)).toBe(1);
    expect(sha1(plain)).toBe(before);
    expect(existsSync(`${plain}-wal`)).toBe(false);
  });

  it('status and sql read a chmod 444 mirror (a backup copy, and a checkpointed copy in WAL mode)', async () => {
    const dir = tempDir();
    const db = await syncedMirror(dir);
    const live = (
      new Database(db, { readonly: true })
        .prepare('SELECT count(*) AS n FROM series WHERE deleted_at IS NULL')
        .get() as {
        n: number;
      }
    ).n;
    expect(live).toBeGreaterThan(0);
    // The folder is writable by all (SQLite may need a -shm beside a WAL file), the copies by nobody.
    chmodSync(dir, 0o777);
    const backup = await runCli(['backup', join(dir, 'bk.db'), '--db', db]);
    expect(backup.code, backup.stderr).toBe(0);
    copyFileSync(db, join(dir, 'wal.db'));
    if (existsSync(`${db}-wal`)) copyFileSync(`${db}-wal`, join(dir, 'wal.db-wal'));
    const w = new Database(join(dir, 'wal.db'));
    w.pragma('journal_mode = WAL');
    w.pragma('wal_checkpoint(TRUNCATE)');
    w.close();
    for (const f of ['bk.db', 'wal.db']) chmodSync(join(dir, f), 0o444);

    for (const f of ['bk.db', 'wal.db']) {
      const path = join(dir, f);
      const status = await runAsReader(['status', '--db', path, '--json'], DEAD_REDIS);
      expect(status.code, `${f}: ${status.stderr}`).toBe(0);
      const report = JSON.parse(status.stdout);
      const series = report.tenants[0].collections.find((c: { name: string }) => c.name === 'series');
      expect(series.live).toBe(live);
      const sql = await runAsReader([
        'sql',
        '--db',
        path,
        '--json',
        'SELECT count(*) AS n FROM series WHERE deleted_at IS NULL',
      ]);
      expect(sql.code, `${f}: ${sql.stderr}`).toBe(0);
      expect(JSON.parse(sql.stdout)).toEqual([{ n: live }]);
    }
  });
});

/**
 * Runs the CLI as a user that cannot write the copies: as `nobody` when this process is root (root ignores file
 * modes), else as this user (who is not the files' owner... or is, but cannot write a 0444 file either way).
 */
async function runAsReader(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const asNobody = process.getuid?.() === 0 && nobodyCanRun();
  const argv = asNobody
    ? ['setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, BIN, ...args]]
    : [process.execPath, [BIN, ...args]];
  const child = spawn(argv[0] as string, argv[1] as string[], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return collect(child);
}

let nobody: boolean | undefined;
function nobodyCanRun(): boolean {
  nobody ??=
    spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, BIN, '--help'], {
      stdio: 'ignore',
    }).status === 0;
  return nobody;
}
