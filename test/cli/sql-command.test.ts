import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitCodeFor } from '../../src/cli/exit-codes.js';
import { main } from '../../src/cli/main.js';
import { formatCsv, leadingVerb, type SqlIo, sqlCommand } from '../../src/cli/sql-command.js';
import { tenantSlug } from '../../src/ids.js';
import { openSqliteStore } from '../../src/store/sqlite-store.js';
import { PUBLISHED, type SyncState } from '../../src/store/store.js';

const blank: SyncState = { cursor: null, full: null, incremental: null, lastSuccessAt: null, lastError: null };
let dir: string;
let db: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'understudy-'));
  db = join(dir, 'm.db');
  const store = await openSqliteStore(db);
  await store.applyPage(
    { tenant: tenantSlug('acme'), collection: 'series', variant: PUBLISHED },
    [
      { id: 's1', updatedAt: '2026-01-01T00:00:00Z', title: 'Hamlet, "the" play', slug: 'hamlet' },
      { id: 2, updatedAt: '2026-01-02T00:00:00Z', title: 'Line\nbreak', slug: 'lb', blurb: 'x'.repeat(200) },
    ],
    blank,
  );
  await store.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the command in-process, capturing stdout. */
async function run(argv: string[], stdin = ''): Promise<{ code: number; out: string; err?: unknown }> {
  let out = '';
  const io: SqlIo = {
    stdout: (s) => {
      out += s;
    },
    stdin: async () => stdin,
    env: {},
  };
  try {
    return { code: await sqlCommand(argv, io), out };
  } catch (err) {
    return { code: exitCodeFor(err), out, err };
  }
}

const count = async () => JSON.parse((await run(['--db', db, '--json', 'SELECT count(*) AS n FROM series'])).out)[0].n;

describe('understudy sql', () => {
  it('prints an aligned table with headers and a row count, truncating long cells', async () => {
    const { code, out } = await run([
      '--db',
      db,
      'SELECT id, slug, length(doc) > 100 AS big, doc FROM series ORDER BY id',
    ]);
    expect(code).toBe(0);
    const lines = out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^id\s+slug\s+big\s+doc$/);
    expect(lines[1]).toMatch(/^-+ {2}-+ {2}-+ {2}-+$/);
    expect(lines).toHaveLength(5);
    expect(lines[2]).toMatch(/^2\s+lb\s+1\s+\{"id":2,/);
    expect(lines[2]).toMatch(/…$/);
    expect(lines[4]).toBe('(2 rows)');
  });

  it('prints JSON rows in full', async () => {
    const { code, out } = await run(['--db', db, '--json', 'SELECT id, title, doc FROM series ORDER BY id']);
    expect(code).toBe(0);
    const rows = JSON.parse(out);
    expect(rows.map((r: { id: string }) => r.id)).toEqual(['2', 's1']);
    expect(JSON.parse(rows[0].doc).blurb).toHaveLength(200);
    expect(JSON.parse((await run(['--db', db, '--json', 'SELECT 1 WHERE 0'])).out)).toEqual([]);
  });

  it('prints RFC 4180 CSV with a header row', async () => {
    const { out, err } = await run(['--db', db, '--csv', 'SELECT id, title, NULL AS empty FROM series ORDER BY id']);
    expect(err).toBeUndefined();
    expect(out).toBe('id,title,empty\r\n2,"Line\nbreak",\r\ns1,"Hamlet, ""the"" play",\r\n');
    expect(formatCsv(['a'], [[1.5]])).toBe('a\r\n1.5\r\n');
  });

  it('reads SQL from stdin and binds -p parameters', async () => {
    const { out } = await run(
      ['--db', db, '--json', '-p', 'slug', 'hamlet', '-'],
      'SELECT id FROM series WHERE slug = :slug',
    );
    expect(JSON.parse(out)).toEqual([{ id: 's1' }]);
    const piped = await run(['--db', db, '--json'], 'SELECT count(*) AS n FROM series');
    expect(JSON.parse(piped.out)).toEqual([{ n: 2 }]);
  });

  it.each([
    ['DELETE FROM series', 'DELETE'],
    ["INSERT INTO series (tenant, id, doc, mirrored_at) VALUES ('a', 'b', '{}', 'x')", 'INSERT'],
    ["UPDATE series SET title = 'x'", 'UPDATE'],
    ['DROP TABLE series', 'DROP'],
    ["ATTACH DATABASE ':memory:' AS other", 'ATTACH'],
    ['PRAGMA user_version = 7', 'PRAGMA'],
    ['PRAGMA journal_mode = DELETE', 'PRAGMA'],
    [`VACUUM INTO '${'/tmp/understudy-never.db'}'`, 'VACUUM'],
    ['/* sneaky */ -- comment\n delete from series', 'DELETE'],
    ['WITH x AS (SELECT 1) DELETE FROM series', 'WITH'],
  ])('refuses %s and leaves the data intact', async (statement, verb) => {
    const { code, err } = await run(['--db', db, statement]);
    expect(code).toBe(2);
    expect(err).toMatchObject({ code: 'US_READ_ONLY', message: expect.stringContaining('read-only') });
    expect((err as Error).message).toContain(verb);
    expect(await count()).toBe(2);
  });

  it('names the missing database file', async () => {
    const missing = join(dir, 'nope.db');
    const { code, err } = await run(['--db', missing, 'SELECT 1']);
    expect(code).toBe(2);
    expect(err).toMatchObject({ code: 'US_CONFIG', message: expect.stringContaining(missing) });
  });

  it('takes the database from UNDERSTUDY_DB', async () => {
    let out = '';
    const code = await sqlCommand(['--json', 'SELECT count(*) AS n FROM series'], {
      stdout: (s) => {
        out += s;
      },
      stdin: async () => '',
      env: { UNDERSTUDY_DB: db },
    });
    expect(code).toBe(0);
    expect(JSON.parse(out)).toEqual([{ n: 2 }]);
  });

  it('finds the verb past comments', () => {
    expect(leadingVerb('  -- hi\n/* x */ select 1')).toBe('SELECT');
  });

  it('exits non-zero through main with a one-line reason for a write', async () => {
    const code = await main(['sql', '--db', db, 'DELETE FROM series']);
    expect(code).toBe(2);
    expect(await count()).toBe(2);
  });
});

describe('built CLI', () => {
  const bin = join(process.cwd(), 'bin', 'understudy');
  const built =
    spawnSync('node', ['-e', "import('./dist/src/cli/sql-command.js').then(m => process.exit(m.formatCsv ? 0 : 1))"], {
      cwd: process.cwd(),
    }).status === 0;

  it.runIf(built)('answers from the command line and refuses writes with a clear message', () => {
    const ok = spawnSync('node', [bin, 'sql', '--db', db, '--json', 'SELECT count(*) AS n FROM series'], {
      encoding: 'utf8',
    });
    expect(ok.status).toBe(0);
    expect(JSON.parse(ok.stdout)).toEqual([{ n: 2 }]);
    const refused = spawnSync('node', [bin, 'sql', '--db', db, 'DROP TABLE series'], { encoding: 'utf8' });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('sql is read-only: DROP statements are refused');
  });
});
