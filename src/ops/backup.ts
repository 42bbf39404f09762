import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { UnderstudyError } from '../errors.js';

export interface BackupResult {
  readonly path: string;
  readonly bytes: number;
  readonly pages: number;
}

/**
 * Copies the SQLite database at `source` to `dest` with SQLite's online backup API while other connections keep
 * writing. The copy is taken in one step, so it is one consistent snapshot: a stepwise backup restarts whenever
 * another connection writes, and under a steady writer would never finish. It goes to a temporary file beside
 * `dest` and is renamed into place, so `dest` is never a half-written copy. Refuses an existing `dest` unless
 * `force`.
 */
export async function backupDatabase(
  source: string,
  dest: string,
  opts: { readonly force?: boolean } = {},
): Promise<BackupResult> {
  if (existsSync(dest) && !opts.force) {
    throw new UnderstudyError('US_USAGE', `${dest} exists: pass --force to overwrite it`);
  }
  if (!existsSync(dirname(dest))) throw new UnderstudyError('US_USAGE', `directory ${dirname(dest)} does not exist`);
  let db: BetterSqlite3.Database;
  try {
    db = new BetterSqlite3(source, { readonly: true, fileMustExist: true, timeout: 5000 });
  } catch (err) {
    throw new UnderstudyError('US_STORE', `cannot open ${source}: ${(err as Error).message}`, { cause: err });
  }
  const tmp = join(dirname(dest), `.${basename(dest)}.${process.pid}.partial`);
  try {
    rmSync(tmp, { force: true });
    // Every remaining page in the next step: one read transaction, one snapshot.
    const { totalPages } = await db.backup(tmp, { progress: () => 0x7fffffff });
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
    if (err instanceof UnderstudyError) throw err;
    throw new UnderstudyError('US_STORE', `backup of ${source} failed: ${(err as Error).message}`, { cause: err });
  } finally {
    db.close();
  }
}
