import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { openStore } from '../../src/store/open-mirror.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/sync-harness.js';

const BATCH = 7;

/**
 * A writer in another process: each transaction adds BATCH rows to `probe` and bumps `probe_total` by BATCH, so
 * any consistent snapshot has count(probe) = probe_total.n, a multiple of BATCH. Prints each committed total.
 */
const WRITER = `
const Database = require('better-sqlite3');
const db = new Database(process.argv[1]);
db.pragma('journal_mode = WAL');
db.pragma('busy_timeout = 5000');
const add = db.prepare('INSERT INTO probe (batch, pad) VALUES (?, ?)');
const bump = db.prepare('UPDATE probe_total SET n = n + ${BATCH}');
const write = db.transaction((batch) => { for (let i = 0; i < ${BATCH}; i++) add.run(batch, 'x'.repeat(200)); bump.run(); });
let batch = 0;
let stopping = false;
process.on('SIGTERM', () => { stopping = true; });
const loop = () => {
  for (let i = 0; i < 20 && !stopping; i++) write(++batch);
  process.stdout.write(batch + '\\n');
  if (stopping) { db.close(); process.exit(0); }
  setImmediate(loop);
};
loop();
`;

async function mirrorWithProbe(): Promise<{ dir: string; db: string }> {
  const dir = tempDir();
  const db = join(dir, 'mirror.db');
  const store = await openStore(db);
  await store.close();
  const raw = new Database(db);
  raw.exec(`CREATE TABLE probe (id INTEGER PRIMARY KEY, batch INTEGER NOT NULL, pad TEXT NOT NULL);
    CREATE TABLE probe_total (n INTEGER NOT NULL); INSERT INTO probe_total VALUES (0);`);
  raw.close();
  return { dir, db };
}

const readCopy = (path: string) => {
  const copy = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return {
      integrity: copy.pragma('integrity_check', { simple: true }),
      journal: copy.pragma('journal_mode', { simple: true }),
      rows: (copy.prepare('SELECT count(*) AS n FROM probe').get() as { n: number }).n,
      total: (copy.prepare('SELECT n FROM probe_total').get() as { n: number }).n,
      migrations: (copy.prepare('SELECT count(*) AS n FROM kysely_migration').get() as { n: number }).n,
    };
  } finally {
    copy.close();
  }
};

describe('understudy backup', () => {
  it('copies the mirror consistently while another process keeps writing', async () => {
    const { dir, db } = await mirrorWithProbe();
    const writer = spawn(process.execPath, ['-e', WRITER, db], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<number | null>((resolve) => writer.once('exit', (code) => resolve(code)));
    onTestFinished(() => {
      if (writer.exitCode === null) writer.kill('SIGKILL');
    });
    let committed = 0;
    writer.stdout.on('data', (d: Buffer) => {
      const last = d.toString().trim().split('\n').pop();
      if (last) committed = Number(last);
    });
    await vi.waitFor(() => expect(committed).toBeGreaterThan(40), { timeout: 30_000, interval: 20 });

    const before = committed;
    const dest = join(dir, 'backup.db');
    const res = await runCli(['backup', dest, '--db', db]);
    const after = committed;
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(dest);
    expect(res.stdout).toContain(`${statSync(dest).size} bytes`);

    // The writer went on committing while the backup ran.
    await vi.waitFor(() => expect(committed).toBeGreaterThan(after), { timeout: 30_000, interval: 20 });
    expect(after).toBeGreaterThanOrEqual(before);
    writer.kill('SIGTERM');
    expect(await exited).toBe(0);

    const copy = readCopy(dest);
    expect(copy.integrity).toBe('ok');
    expect(copy.journal).toBe('delete');
    expect(copy.migrations).toBeGreaterThan(0);
    expect(copy.rows).toBe(copy.total);
    expect(copy.rows % BATCH).toBe(0);
    expect(copy.rows).toBeGreaterThanOrEqual(before * BATCH);
    // No temporary file left beside the copy.
    expect(readdirSync(dir).filter((f) => f.includes('partial'))).toEqual([]);

    // With the writer stopped, a forced second copy matches the source exactly.
    const again = await runCli(['backup', '--db', db, dest, '--force', '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ path: dest, bytes: statSync(dest).size });
    const source = new Database(db, { readonly: true });
    const n = (source.prepare('SELECT count(*) AS n FROM probe').get() as { n: number }).n;
    source.close();
    expect(readCopy(dest).rows).toBe(n);
  });

  it('refuses to overwrite an existing file without --force', async () => {
    const { dir, db } = await mirrorWithProbe();
    const dest = join(dir, 'taken.db');
    writeFileSync(dest, 'keep me');
    const res = await runCli(['backup', dest, '--db', db]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('--force');
    expect(statSync(dest).size).toBe('keep me'.length);
  });

  it('finds the database from --config and from UNDERSTUDY_DB', async () => {
    const { dir, db } = await mirrorWithProbe();
    const config = join(dir, 'understudy.json');
    writeFileSync(
      config,
      JSON.stringify({ baseUrl: 'http://127.0.0.1:1', database: db, tenants: [{ slug: 'a', apiKeyEnv: 'A_KEY' }] }),
    );
    expect((await runCli(['backup', '--config', config, join(dir, 'c.db')])).code).toBe(0);
    expect(readCopy(join(dir, 'c.db')).integrity).toBe('ok');
    expect((await runCli(['backup', join(dir, 'e.db')], { env: { UNDERSTUDY_DB: db } })).code).toBe(0);
    expect(readCopy(join(dir, 'e.db')).integrity).toBe('ok');
  });

  it('fails without creating FILE when the database does not exist', async () => {
    const dir = tempDir();
    const res = await runCli(['backup', join(dir, 'b.db'), '--db', join(dir, 'missing.db')]);
    expect(res.code).not.toBe(0);
    expect(existsSync(join(dir, 'b.db'))).toBe(false);
    expect((await runCli(['backup'])).code).toBe(2);
  });
});
