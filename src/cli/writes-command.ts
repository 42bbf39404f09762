import { createApp } from '../app/create-app.js';
import { loadConfigFile } from '../config/load-config.js';
import { UsageError } from '../errors.js';
import { type FailedWrite, listFailedWrites, type RetryResult, retryWrite, showWrite } from '../queue/failed-writes.js';
import { waitForWriteState } from '../queue/follow-write.js';
import { createRecordOrder } from '../queue/redis-record-order.js';
import { isPendingJob, openWritesQueue } from '../queue/write-queue.js';
import { WriteWaitTimeoutError } from '../writes/write-state.js';
import { EXIT_TIMEOUT } from './exit-codes.js';
import { formatTable } from './format-table.js';
import { COMMON_FLAGS, type CommandSpec, type Flags, helpText, parseFlags } from './parse-flags.js';

const FLAGS = {
  config: { type: 'string', value: 'FILE', help: 'JSON config (redis, database)' },
  json: { type: 'boolean', help: 'machine-readable output' },
  all: { type: 'boolean', help: 'retry: every write `writes failed` lists that a retry can fix' },
  'include-permanent': { type: 'boolean', help: 'retry --all: requeue permanent failures (404, 4xx) too' },
  timeout: { type: 'string', value: 'S', help: 'wait: seconds to wait at most (default: no limit)' },
  resend: {
    type: 'boolean',
    help: 'retry: forget an earlier unknown outcome, so a create is sent without looking for its record',
  },
  ...COMMON_FLAGS,
} as const satisfies Flags;

const SPEC: CommandSpec<typeof FLAGS> = {
  name: 'writes',
  usage: 'failed|show <jobId>|retry <jobId>...|retry --all --config FILE [options]',
  about: "Failed writes (Redis: REDIS_URL, else config redis.url; details from write_log in the config's database).",
  operands: true,
  flags: FLAGS,
  footer: `Subcommands:
  failed          lists failed write jobs with their reasons, and bulk writes that completed as partial
  show <jobId>    prints one write job as JSON: state (queued, running, retrying, ok, partial, failed), the
                  outcome (resultId, error), BullMQ's view (queueState, data, progress) and its write_log row
  wait <jobId>    waits for the write's outcome and prints it as \`show\` does; exit 0 ok, 1 failed or
                  partial, 75 still not done after --timeout
  retry <jobId>   queues a failed write again (fresh attempts, behind writes already queued for its record);
                  a partial bulk write is replayed for the records that failed; --all retries what
                  \`writes failed\` lists that can succeed on a retry (5xx, timeouts, rate limits, unknown
                  outcomes) and says which permanent failures (404, 4xx, refused data) it left
`,
};

const target = (f: FailedWrite) => `${f.tenant}/${f.collection}${f.recordId ? `/${f.recordId}` : ''}`;

export async function writesCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, SPEC);
  const [sub, ...args] = positionals;
  if (values.help || !sub) {
    (values.help ? process.stdout : process.stderr).write(helpText(SPEC));
    return values.help ? 0 : 2;
  }
  if (!['failed', 'show', 'wait', 'retry'].includes(sub))
    throw new UsageError(`unknown subcommand "${sub}" (failed, show, wait, retry)`);
  if (!values.config) throw new UsageError('--config FILE is required');
  if ((sub === 'show' || sub === 'wait') && args.length !== 1) throw new UsageError(`writes ${sub} takes one job id`);
  const timeoutS = values.timeout === undefined ? undefined : Number(values.timeout);
  if (values.timeout !== undefined && sub !== 'wait') throw new UsageError('--timeout applies to writes wait');
  if (timeoutS !== undefined && !(Number.isFinite(timeoutS) && timeoutS >= 0))
    throw new UsageError(`--timeout ${values.timeout}: a number of seconds, 0 or more`);
  if (values['include-permanent'] && !(sub === 'retry' && values.all))
    throw new UsageError('--include-permanent applies to writes retry --all');
  if (sub === 'retry' && (values.all ? args.length > 0 : args.length === 0))
    throw new UsageError('writes retry takes job ids or --all');
  if (sub === 'failed' && args.length > 0) throw new UsageError('writes failed takes no arguments');

  const config = loadConfigFile(values.config);
  // Redis must answer; the mirror's write log is read (retry: written) only if the mirror exists, never created.
  await using app = await createApp(config, process.env, { profile: 'queue' });
  const { redis } = app;
  const { prefix } = app.redisSettings;
  const queue = openWritesQueue(redis, prefix);
  try {
    // Only `retry` writes to the log (a replayed bulk write is marked); the others read it over a read-only handle.
    const writable = sub === 'retry' ? await app.writableWriteLog() : null;
    const writeLog = sub === 'retry' ? writable : ((await app.mirror())?.writeLog ?? null);
    if (sub === 'failed') {
      const failed = await listFailedWrites(queue, writeLog);
      if (values.json) process.stdout.write(`${JSON.stringify(failed, null, 2)}\n`);
      else if (values.quiet) return 0;
      else if (failed.length === 0) process.stdout.write('no failed writes\n');
      else {
        const rows = failed.map((f) => ({
          job: f.jobId,
          status: f.status,
          write: `${f.op} ${target(f)}`,
          attempts: String(f.attempts),
          at: f.failedAt ?? '',
          reason: f.failures?.length
            ? `${f.reason} (${f.failures.map((x) => `${x.id}: ${x.message}`).join('; ')})`
            : f.reason,
        }));
        process.stdout.write(`${formatTable(rows, { maxCell: 240 })}\n`);
      }
      return 0;
    }
    const jobId = args[0] as string;
    if (sub === 'show') {
      const details = await showWrite(queue, writeLog, jobId);
      process.stdout.write(`${JSON.stringify(details, null, 2)}\n`);
      return 0;
    }
    if (sub === 'wait') return await waitCommand(queue, writeLog, jobId, timeoutS);
    const order = createRecordOrder({ redis, prefix, isPending: (id) => isPendingJob(queue, id) });
    // --all: what `writes failed` lists (failed jobs, partial bulk writes not replayed yet) that a retry can fix.
    const failed = values.all ? await listFailedWrites(queue, writeLog) : [];
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
    if (values.quiet) return 0;
    if (results.length === 0 && left.length === 0) process.stdout.write('no failed writes to retry\n');
    for (const r of results) {
      process.stdout.write(r.how === 'requeued' ? `${r.jobId} requeued\n` : `${r.jobId} replayed as ${r.runs}\n`);
    }
    for (const f of left) {
      process.stdout.write(`${f.jobId} left: permanent failure (${f.code ?? 'no code'}: ${f.reason})\n`);
    }
    if (values.all && left.length > 0) {
      process.stdout.write(
        `requeued ${results.length}, left ${left.length} permanent failure(s): retry them by id, or add --include-permanent\n`,
      );
    }
    return 0;
  } finally {
    await queue.close().catch(() => undefined);
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
    if (!(err instanceof WriteWaitTimeoutError)) throw err;
    process.stdout.write(`${JSON.stringify(err.last, null, 2)}\n`);
    const why = err.why ? `: ${err.why}` : '';
    process.stderr.write(`understudy writes: write ${jobId} is still ${err.last.state} after ${timeoutS} s${why}\n`);
    return EXIT_TIMEOUT;
  }
}
