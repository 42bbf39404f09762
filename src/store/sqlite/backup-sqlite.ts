import { existsSync, mkdirSync, realpathSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { isUnderstudyError, UnderstudyError } from '../../errors.js';
import type { BackupResult } from '../backup.js';

/** Whether two paths name one file: the same path once resolved (links followed), or the same inode. */
function sameFile(a: string, b: string): boolean {
  const real = (p: string): string => {
    try {
      return realpathSync(p);
    } catch {
      return resolve(p);
    }
  };
  if (real(a) === real(b)) return true;
  try {
    const x = statSync(a);
    const y = statSync(b);
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

/** The part of a better-sqlite3 connection a backup uses. */
type BackupSource = Pick<BetterSqlite3.Database, 'backup'>;

/**
 * Copies the database `source` is open on (read-only will do) to `dest` with SQLite's online backup API while
 * other connections keep writing. The copy is taken in one step, so it is one consistent snapshot: a stepwise
 * backup restarts whenever another connection writes, and under a steady writer would never finish. It goes to a
 * temporary file beside `dest` and is renamed into place, so `dest` is never a half-written copy. Refuses an
 * existing `dest` unless `force`, and a `dest` naming the source `from` (or its -wal, -shm or -journal file) even
 * with `force`; creates the folder of `dest` when missing.
 */
export async function backupSqlite(
  source: BackupSource,
  from: string,
  dest: string,
  opts: { readonly force?: boolean } = {},
): Promise<BackupResult> {
  if ([from, `${from}-wal`, `${from}-shm`, `${from}-journal`].some((f) => sameFile(f, dest)))
    throw new UnderstudyError(
      'US_USAGE',
      `${dest} is the mirror being copied (or one of its files): choose another FILE`,
    );
  if (existsSync(dest) && !opts.force) {
    throw new UnderstudyError('US_USAGE', `${dest} exists: pass --force to overwrite it`);
  }
  try {
    mkdirSync(dirname(dest), { recursive: true });
  } catch (err) {
    throw new UnderstudyError('US_USAGE', `cannot create the folder ${dirname(dest)}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const tmp = join(dirname(dest), `.${basename(dest)}.${process.pid}.partial`);
  try {
    rmSync(tmp, { force: true });
    // Every remaining page in the next step: one read transaction, one snapshot.
    const { totalPages } = await source.backup(tmp, { progress: () => 0x7fffffff });
    // The copy keeps the source's WAL flag in its header; make it a self-contained rollback-journal file.
    const copy = new BetterSqlite3(tmp);
    try {
      copy.pragma('journal_mode = DELETE');
    } finally {
      copy.close();
    }
    renameSync(tmp, dest);
    return { path: dest, bytes: statSync(dest).size, pages: totalPages };
  } catch (err) {
    rmSync(tmp, { force: true });
    if (isUnderstudyError(err)) throw err;
    throw new UnderstudyError('US_STORE', `backup of ${from} failed: ${(err as Error).message}`, { cause: err });
  }
}
