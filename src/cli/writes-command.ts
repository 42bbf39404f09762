import type { QueueApp } from '../app/command-app.js';
import { createApp } from '../app/create-app.js';
import { loadConfigFile } from '../config/load-config.js';
import { UsageError } from '../errors.js';
import { errorsFailTheCalls } from '../queue/error-listeners.js';
import { type FailedWrite, listFailedWrites, type RetryResult, retryWrite, showWrite } from '../queue/failed-writes.js';
import { waitForWriteState } from '../queue/follow-write.js';
import { createRecordOrder } from '../queue/redis-record-order.js';
import { isPendingJob, openWritesQueue } from '../queue/write-queue.js';
import type { WriteLog, WriteLogReader } from '../writes/write-log.js';
import { isWriteWaitTimeout } from '../writes/write-state.js';
import { printHelp } from './command-help.js';
import { EXIT_TIMEOUT } from './exit-codes.js';
import { formatTable } from './format-table.js';
import { parseFlags } from './parse-flags.js';
import { WRITES_SPEC } from './specs/writes-spec.js';

type WritesValues = ReturnType<typeof parseFlags<(typeof WRITES_SPEC)['flags']>>['values'];
type WritesQueue = ReturnType<typeof openWritesQueue>;

const target = (f: FailedWrite) => `${f.tenant}/${f.collection}${f.recordId ? `/${f.recordId}` : ''}`;

/** `--timeout` (seconds; `writes wait` only) and `--include-permanent` (`writes retry --all` only), checked. */
function waitSeconds(sub: string, values: WritesValues): number | undefined {
  const timeoutS = values.timeout;
  if (timeoutS !== undefined && sub !== 'wait') throw new UsageError('--timeout applies to writes wait');
  if (values['include-permanent'] && !(sub === 'retry' && values.all))
    throw new UsageError('--include-permanent applies to writes retry --all');
  return timeoutS;
}

export async function writesCommand(argv: string[]): Promise<number> {
  const { values, help, subcommand, args } = parseFlags(argv, WRITES_SPEC);
  if (help) return printHelp(WRITES_SPEC, help);
  const sub = subcommand ?? '';
  const timeoutS = waitSeconds(sub, values);
  const config = loadConfigFile(values.config);
  // Redis must answer; the mirror's write log is read (retry: written) only if the mirror exists, never created.
  await using app = await createApp(config, process.env, { profile: 'queue' });
  const queue = openWritesQueue(app.redis, app.redisSettings.prefix, errorsFailTheCalls);
  try {
    // Only `retry` writes to the log (a replayed bulk write is marked); the others read it over a read-only handle.
    if (sub === 'retry') return await retryCommand(app, queue, await app.writableWriteLog(), args, values);
    const writeLog = (await app.mirror())?.writeLog ?? null;
    if (sub === 'failed') return await failedCommand(queue, writeLog, values);
    const jobId = args[0] as string;
    if (sub === 'wait') return await waitCommand(queue, writeLog, jobId, timeoutS);
    process.stdout.write(`${JSON.stringify(await showWrite(queue, writeLog, jobId), null, 2)}\n`);
    return 0;
  } finally {
    await queue.close().catch(() => undefined);
  }
}

/** `writes failed`: the failed writes as a table (or JSON). */
async function failedCommand(queue: WritesQueue, writeLog: WriteLogReader | null, values: WritesValues) {
  const failed = await listFailedWrites(queue, writeLog);
  if (values.json) process.stdout.write(`${JSON.stringify(failed, null, 2)}\n`);
  else if (values.quiet) return 0;
  else if (failed.length === 0) process.stdout.write('no failed writes\n');
  else {
    // The token a write came through (`serve`), when any did.
    const by = failed.some((f) => f.tokenName !== null);
    const rows = failed.map((f) => ({
      job: f.jobId,
      status: f.status,
      write: `${f.op} ${target(f)}`,
      attempts: String(f.attempts),
      ...(by ? { token: f.tokenName ?? '' } : {}),
      at: f.failedAt ?? '',
      reason: f.failures?.length
        ? `${f.reason} (${f.failures.map((x) => `${x.id}: ${x.message}`).join('; ')})`
        : f.reason,
    }));
    process.stdout.write(`${formatTable(rows, { maxCell: 240 })}\n`);
  }
  return 0;
}

/** `writes retry <jobId>... | --all`: requeues (or replays) each, then says what it did and what it left. */
async function retryCommand(
  app: QueueApp,
  queue: WritesQueue,
  writable: WriteLog | null,
  args: readonly string[],
  values: WritesValues,
): Promise<number> {
  const { redis } = app;
  const { prefix } = app.redisSettings;
  const order = createRecordOrder({ redis, prefix, isPending: (id) => isPendingJob(queue, id) });
  // --all: what `writes failed` lists (failed jobs, partial bulk writes not replayed yet) that a retry can fix.
  const failed = values.all ? await listFailedWrites(queue, writable) : [];
  const left = values['include-permanent'] ? [] : failed.filter((f) => !f.retryable);
  const ids = values.all ? failed.filter((f) => !left.includes(f)).map((f) => f.jobId) : args;
  const results: RetryResult[] = [];
  for (const id of ids) {
    results.push(await retryWrite(queue, order, writable, id, values.resend ? { resend: true } : {}));
  }
  if (values.json) {
    const leftOut = left.map((f) => ({ jobId: f.jobId, how: 'left', code: f.code, reason: f.reason }));
    process.stdout.write(`${JSON.stringify([...results, ...leftOut])}\n`);
    return 0;
  }
  if (!values.quiet) printRetried(results, left, values.all === true);
  return 0;
}

function printRetried(results: readonly RetryResult[], left: readonly FailedWrite[], all: boolean): void {
  if (results.length === 0 && left.length === 0) process.stdout.write('no failed writes to retry\n');
  for (const r of results) {
    process.stdout.write(r.how === 'requeued' ? `${r.jobId} requeued\n` : `${r.jobId} replayed as ${r.runs}\n`);
  }
  for (const f of left) {
    process.stdout.write(`${f.jobId} left: permanent failure (${f.code ?? 'no code'}: ${f.reason})\n`);
  }
  if (all && left.length > 0) {
    process.stdout.write(
      `requeued ${results.length}, left ${left.length} permanent failure(s): retry them by id, or add --include-permanent\n`,
    );
  }
}

/** `writes wait`: prints the outcome; 0 ok, 1 failed or partial, 75 (`EXIT_TIMEOUT`) when time ran out first. */
async function waitCommand(
  queue: Parameters<typeof waitForWriteState>[0],
  writeLog: Parameters<typeof waitForWriteState>[3],
  jobId: string,
  timeoutS: number | undefined,
): Promise<number> {
  try {
    const state = await waitForWriteState(
      queue,
      jobId,
      timeoutS === undefined ? {} : { timeoutMs: Math.round(timeoutS * 1000) },
      writeLog,
    );
    process.stdout.write(`${JSON.stringify(state, null, 2)}\n`);
    return state.state === 'ok' ? 0 : 1;
  } catch (err) {
    if (!isWriteWaitTimeout(err)) throw err;
    process.stdout.write(`${JSON.stringify(err.last, null, 2)}\n`);
    const why = err.why ? `: ${err.why}` : '';
    process.stderr.write(`understudy writes: write ${jobId} is still ${err.last.state} after ${timeoutS} s${why}\n`);
    return EXIT_TIMEOUT;
  }
}
