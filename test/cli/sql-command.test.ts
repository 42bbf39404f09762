import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitCodeFor } from '../../src/cli/exit-codes.js';
import { main } from '../../src/cli/main.js';
import { assertReadOnly, formatCsv, leadingVerb, type SqlIo, sqlCommand } from '../../src/cli/sql-command.js';
import { openStore } from '../../src/store/open-mirror.js';
import { BLANK_SYNC_STATE, PUBLISHED, type SyncState } from '../../src/sync/store-port.js';
import { tenantSlug } from '../../src/vocabulary/ids.js';

const blank: SyncState = BLANK_SYNC_STATE;
let dir: string;
let db: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'understudy-'));
  db = join(dir, 'm.db');
  const store = await openStore(db);
  await store.write(
    { tenant: tenantSlug('acme'), collection: 'series', variant: PUBLISHED },
    {
      upserts: [
        { id: 's1', updatedAt: '2026-01-01T00:00:00Z', title: 'Hamlet, "the" play', slug: 'hamlet' },
        { id: 2, updatedAt: '2026-01-02T00:00:00Z', title: 'Line\nbreak', slug: 'lb', blurb: 'x'.repeat(200) },
      ],
      next: blank,
    },
  );
  await store.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the command in-process, capturing stdout (and stderr into `errOut`). */
async function run(
  argv: string[],
  stdin = '',
  extra: Partial<SqlIo> = {},
): Promise<{ code: number; out: string; err?: unknown; errOut: string; writes: number }> {
  let out = '';
  let errOut = '';
  let writes = 0;
  const io: SqlIo = {
    stdout: (s) => {
      out += s;
      writes++;
    },
    stderr: (s) => {
      errOut += s;
    },
    stdin: async () => stdin,
    stdinIsTTY: false,
    env: {},
    ...extra,
  };
  try {
    return { code: await sqlCommand(argv, io), out, errOut, writes };
  } catch (err) {
    return { code: exitCodeFor(err), out, err, errOut, writes };
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
    // doc is JSON, so it prints as JSON (not as a string holding JSON).
    expect(rows[0].doc.blurb).toHaveLength(200);
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
    [`; ATTACH DATABASE '${'/tmp/understudy-never-attach.db'}' AS x`, 'ATTACH'],
    [`/* hi */ ;; -- there\n ; ATTACH DATABASE '${'/tmp/understudy-never-attach.db'}' AS x`, 'ATTACH'],
    ['; DELETE FROM series', 'DELETE'],
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

  it('finds the verb past comments and empty statements', () => {
    expect(leadingVerb('  -- hi\n/* x */ select 1')).toBe('SELECT');
    expect(leadingVerb('; ;\n-- x\n/* y */; attach database')).toBe('ATTACH');
  });

  it('refuses a statement whose verb it cannot find, even one SQLite calls read-only', () => {
    expect(() => assertReadOnly({ readonly: true }, '; ;')).toThrow(/read-only: this statement is refused/);
    expect(() => assertReadOnly({ readonly: true }, '-- only a comment')).toThrow(/read-only/);
  });

  it('prints usage and exits 2 on a terminal with no statement and nothing piped, instead of waiting', async () => {
    const { code, out, errOut } = await run(['--db', db], '', {
      stdinIsTTY: true,
      stdin: () => new Promise<string>(() => {}),
    });
    expect(code).toBe(2);
    expect(out).toBe('');
    expect(errOut).toMatch(/^Usage: understudy sql/);
  });

  it('prints one JSON object per line with --nl (NDJSON)', async () => {
    const { code, out } = await run(['--db', db, '--nl', 'SELECT id, slug FROM series ORDER BY id']);
    expect(code).toBe(0);
    expect(out).toBe('{"id":"2","slug":"lb"}\n{"id":"s1","slug":"hamlet"}\n');
    expect((await run(['--db', db, '--nl', 'SELECT 1 WHERE 0'])).out).toBe('');
    expect((await run(['--db', db, '--nl', '--csv', 'SELECT 1'])).code).toBe(2);
  });

  it.each([
    ['--csv', (n: number) => n + 1],
    ['--json', (n: number) => n + 2],
    ['--nl', (n: number) => n],
    ['--table', (n: number) => n + 3],
  ])('streams %s output in bounded chunks as rows are read', async (flag, lines) => {
    const n = 20_000;
    const q = `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${n}) SELECT x, printf('%0100d', x) AS pad FROM c`;
    const { code, out, writes } = await run(['--db', db, ...(flag === '--table' ? [] : [flag]), q]);
    expect(code).toBe(0);
    expect(out.trimEnd().split('\n')).toHaveLength(lines(n));
    // About 2.3 MB of output: written as it is produced, in chunks of at most 64 KiB, never as one string.
    expect(writes).toBeGreaterThan(20);
    expect(out.length / writes).toBeLessThanOrEqual(64 * 1024 + 200);
  });

  it('sizes table columns from the first 1000 rows, then streams the rest in that layout', async () => {
    const q =
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1001) SELECT CASE WHEN x = 1001 THEN 'a-much-longer-cell' ELSE 'ab' END AS v FROM c";
    const lines = (await run(['--db', db, q])).out.trimEnd().split('\n');
    expect(lines[0]).toBe('v');
    expect(lines[1]).toBe('--');
    expect(lines[2]).toBe('ab');
    expect(lines.at(-2)).toBe('a-much-longer-cell');
    expect(lines.at(-1)).toBe('(1001 rows)');
  });

  describe('output you can trust', () => {
    it('prints JSON values as JSON in --json and --nl, a plain text column as text, integers exactly', async () => {
      const q = `SELECT doc ->> '$.blurb' AS b, json_array(1, 9007199254740993) AS arr, title, '[1,2]' AS lit,
        9007199254740993 AS big, -9007199254740993 AS neg, 1.5 AS r FROM series WHERE id = '2'`;
      const { out } = await run(['--db', db, '--json', q]);
      expect(out).toContain('"arr":[1,9007199254740993]');
      expect(out).toContain('"big":9007199254740993,"neg":-9007199254740993,"r":1.5');
      const row = JSON.parse(out)[0];
      expect(row).toMatchObject({ b: 'x'.repeat(200), title: 'Line\nbreak', lit: [1, 2] });
      const nl = (await run(['--db', db, '--nl', "SELECT json_object('a', json('[1,\n2]')) AS o"])).out;
      expect(nl).toBe('{"o":{"a":[1,2]}}\n');
      // A typed text column never turns into JSON, whatever it holds.
      const titled = await run(['--db', db, '--json', "SELECT title FROM series WHERE id = 's1'"]);
      expect(JSON.parse(titled.out)).toEqual([{ title: 'Hamlet, "the" play' }]);
    });

    it('makes a repeated column name unique in JSON, with a warning on stderr', async () => {
      const { code, out, errOut } = await run(['--db', db, '--json', 'SELECT 1 AS a, 2 AS a, 3 AS a_2']);
      expect(code).toBe(0);
      expect(JSON.parse(out)).toEqual([{ a: 1, a_3: 2, a_2: 3 }]);
      expect(errOut).toBe(
        'understudy sql: warning: column name "a" appears more than once; the repeat is printed as "a_3"\n',
      );
    });

    it('shows NULL visibly, escapes control characters and aligns wide text in the table', async () => {
      const q = `SELECT NULL AS x, '' AS y, char(27) || '[2J' || char(7) || char(9) AS e, 'q' AS z
        UNION ALL SELECT '日本語のタイトル', 'é', char(8238) || 'abc', 'w'`;
      const lines = (await run(['--db', db, q])).out.split('\n');
      // biome-ignore lint/suspicious/noControlCharactersInRegex: no control character may reach the terminal
      expect(lines.join('\n')).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u202e]/);
      expect(lines[2]).toBe('NULL                 \\x1b[2J\\x07\\t  q');
      expect(lines[3]).toBe('日本語のタイトル  é  \\u202eabc      w');
      // Each column starts at the same terminal column on every line (CJK counts 2).
      expect(lines[0]).toBe('x                 y  e              z');
    });

    it('prints one value as is with --raw, and refuses what is not one value', async () => {
      expect((await run(['--db', db, '--raw', "SELECT 'a'"])).out).toBe('a\n');
      expect((await run(['--db', db, '--raw', 'SELECT 9007199254740993'])).out).toBe('9007199254740993\n');
      expect((await run(['--db', db, '--raw', "SELECT 'x' || char(13)"])).out).toBe('x\r\n');
      expect((await run(['--db', db, '--raw', 'SELECT NULL'])).out).toBe('');
      expect((await run(['--db', db, '--raw', 'SELECT 1, 2'])).code).toBe(2);
      const many = await run(['--db', db, '--raw', 'SELECT id FROM series']);
      expect([many.code, many.out]).toEqual([2, '']);
      const none = await run(['--db', db, '--raw', 'SELECT 1 WHERE 0']);
      expect([none.code, none.err]).toMatchObject([1, { code: 'US_NOT_FOUND' }]);
    });
  });

  it('exits non-zero through main with a one-line reason for a write', async () => {
    const code = await main(['sql', '--db', db, 'DELETE FROM series']);
    expect(code).toBe(2);
    expect(await count()).toBe(2);
  });
});

describe('built CLI', () => {
  const bin = join(process.cwd(), 'bin', 'understudy');
  // `npm test` builds first (pretest); run alone, these tests fail loudly rather than skip when dist/ is missing.
  beforeAll(() => {
    const built = spawnSync(
      'node',
      ['-e', "import('./dist/src/cli/sql-command.js').then(m => process.exit(m.formatCsv ? 0 : 1))"],
      { cwd: process.cwd() },
    );
    if (built.status !== 0) throw new Error('dist/ is missing or stale: run `npm run build` first (npm test does)');
  });

  it('answers from the command line and refuses writes with a clear message', () => {
    const ok = spawnSync('node', [bin, 'sql', '--db', db, '--json', 'SELECT count(*) AS n FROM series'], {
      encoding: 'utf8',
    });
    expect(ok.status).toBe(0);
    expect(JSON.parse(ok.stdout)).toEqual([{ n: 2 }]);
    const refused = spawnSync('node', [bin, 'sql', '--db', db, 'DROP TABLE series'], { encoding: 'utf8' });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('sql is read-only: DROP statements are refused');
  });

  it('names an unknown column in one line, prefixed once (issue 37, item 10)', () => {
    const r = spawnSync('node', [bin, 'sql', '--db', db, 'SELECT nope FROM series'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toBe('understudy sql: no such column: nope\n');
  });

  it('stops a runaway statement at --timeout with exit 1 and a one-line reason', () => {
    const r = spawnSync(
      'node',
      [
        bin,
        'sql',
        '--db',
        db,
        '--timeout',
        '1',
        'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c',
      ],
      { encoding: 'utf8' },
    );
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^understudy sql: stopped after 1 s \(--timeout\)[^\n]*\n$/);
  });

  it('gives the same output with --timeout when the statement finishes in time', () => {
    for (const flag of ['--json', '--csv', '--nl', '--max-width=20']) {
      const argv = ['sql', '--db', db, flag, 'SELECT id, slug, doc FROM series ORDER BY id'];
      const plain = spawnSync('node', [bin, ...argv], { encoding: 'utf8' });
      const timed = spawnSync('node', [bin, ...argv, '--timeout', '30'], { encoding: 'utf8' });
      expect(plain.status).toBe(0);
      expect(timed.status).toBe(0);
      expect(timed.stdout).toBe(plain.stdout);
    }
    const refused = spawnSync('node', [bin, 'sql', '--db', db, '--timeout', '30', 'DELETE FROM series'], {
      encoding: 'utf8',
    });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('sql is read-only: DELETE statements are refused');
  });

  it('refuses a --timeout that is not a positive number of seconds', () => {
    for (const t of ['0', '-1', 'soon', '3000000']) {
      const r = spawnSync('node', [bin, 'sql', '--db', db, '--timeout', t, 'SELECT 1'], { encoding: 'utf8' });
      expect(r.status).toBe(2);
    }
  });
});
