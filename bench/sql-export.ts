/**
 * Peak RSS of `understudy sql --csv` exporting 1,000,000 rows of about 1 KB each to a file: rows stream from
 * better-sqlite3's `.iterate()` to stdout in 64 KiB chunks, so memory stays flat whatever the row count.
 * Target (issue 11, item 7): under 200 MB. Also the same export with `--timeout` (statement in a child process).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';

const ROWS = Number(process.env.BENCH_SQL_ROWS ?? 1_000_000);
const TIME = '/usr/bin/time';

/** Runs the CLI with stdout to `outFile`; returns exit code, wall time and peak RSS (kB, from GNU time). */
async function measure(args: string[], outFile: string, rssFile: string) {
  const bin = fileURLToPath(new URL('../../bin/understudy', import.meta.url));
  const started = Date.now();
  const child = spawn(TIME, ['-f', '%M', '-o', rssFile, process.execPath, bin, ...args], {
    stdio: ['ignore', openSync(outFile, 'w'), 'inherit'],
  });
  const code: number | null = await new Promise((resolve) => child.once('close', resolve));
  const ms = Date.now() - started;
  const kb = Number(readFileSync(rssFile, 'utf8').trim().split('\n').at(-1));
  return { code, ms, mb: kb / 1024, bytes: statSync(outFile).size };
}

export default async function bench(): Promise<string> {
  if (!existsSync(TIME)) throw new Error(`${TIME} (GNU time) is needed to read the peak RSS`);
  const dir = mkdtempSync(join(tmpdir(), 'understudy-bench-'));
  try {
    const db = join(dir, 'big.db');
    const fill = Date.now();
    const d = new BetterSqlite3(db);
    d.exec('CREATE TABLE big (i INTEGER PRIMARY KEY, s TEXT)');
    d.exec(
      `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${ROWS})
       INSERT INTO big SELECT x, hex(randomblob(512)) FROM c`,
    );
    d.close();
    const fillMs = Date.now() - fill;
    const sql = ['sql', '--db', db, '--csv', 'SELECT * FROM big'];
    const plain = await measure(sql, join(dir, 'out.csv'), join(dir, 'rss1'));
    rmSync(join(dir, 'out.csv'));
    const timed = await measure([...sql, '--timeout', '3600'], join(dir, 'out2.csv'), join(dir, 'rss2'));
    const row = (name: string, r: Awaited<ReturnType<typeof measure>>) =>
      `| ${name} | ${r.code} | ${(r.bytes / 2 ** 20).toFixed(0)} MiB | ${(r.ms / 1000).toFixed(1)} s | ${Math.round(ROWS / (r.ms / 1000)).toLocaleString('en')} | **${r.mb.toFixed(0)} MB** |`;
    const met = plain.mb < 200 && timed.mb < 200 && plain.code === 0 && timed.code === 0;
    return [
      '## SQL export memory',
      '',
      `A table of ${ROWS.toLocaleString('en')} rows, each an integer and 1,024 hex characters (filled in ${(fillMs / 1000).toFixed(1)} s),`,
      'exported with `understudy sql --csv "SELECT * FROM big" > out.csv`. Peak RSS is GNU time\'s maximum resident set',
      'size (`wait4`): with `--timeout` it is the larger of the CLI process and the child process that runs the statement.',
      '',
      '| run | exit | output | time | rows/s | peak RSS |',
      '|---|---|---|---|---|---|',
      row('`--csv`', plain),
      row('`--csv --timeout 3600`', timed),
      '',
      `Result: target < 200 MB ${met ? 'met' : 'NOT met'}.`,
    ].join('\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
