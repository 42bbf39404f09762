/**
 * The child process `understudy sql --timeout` runs the statement in. better-sqlite3 is synchronous and a statement
 * stuck in SQLite's native code cannot be stopped from JavaScript (a worker thread's terminate() waits for it, and
 * so does process.exit), so the statement runs in a process of its own that the parent can SIGKILL.
 *
 * Protocol: the parent sends one `SqlJob` over IPC; rows go to stdout as they are read, pausing while the pipe to
 * the parent is full (so memory stays flat); the child answers `{ ok: true }` or `{ ok: false, code, message }`.
 */
import { once } from 'node:events';
import { describeError, type ErrorCode, isUnderstudyError } from '../errors.js';
import { type SqlJob, streamSql } from './sql-stream.js';

export type SqlChildResult = { ok: true } | { ok: false; code: ErrorCode; message: string };

let answered = false;
const answer = (result: SqlChildResult): void => {
  answered = true;
  process.send?.(result, () => process.disconnect());
};

/** Writes a chunk; a promise when stdout asks to wait (`drain`). */
const write = (chunk: string): undefined | Promise<void> =>
  process.stdout.write(chunk) ? undefined : once(process.stdout, 'drain').then(() => undefined);

// The parent is gone (it stopped on a closed pipe, or was killed): nobody reads what this would print.
process.once('disconnect', () => {
  if (!answered) process.exit(0);
});
process.stdout.on('error', () => process.exit(0));

process.once('message', async (job: SqlJob) => {
  try {
    await streamSql(job, write, (line) => process.stderr.write(`understudy sql: ${line}\n`));
    // Everything written so far is flushed once an empty write's callback runs.
    await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
    answer({ ok: true });
  } catch (err) {
    answer({ ok: false, code: isUnderstudyError(err) ? err.code : 'US_STORE', message: describeError(err) });
  }
});
