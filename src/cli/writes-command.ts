import { existsSync } from 'node:fs';
import { databasePath } from '../config/database-path.js';
import { loadConfigFile } from '../config/load-config.js';
import { UsageError } from '../errors.js';
import { type FailedWrite, listFailedWrites, type RetryResult, retryWrite, showWrite } from '../queue/failed-writes.js';
import { createRecordOrder } from '../queue/redis-record-order.js';
import { redisSettings, shortLivedRedis } from '../queue/redis-settings.js';
import { isPendingJob, openWritesQueue } from '../queue/write-queue.js';
import { openSqliteWriteLog, type WriteLog } from '../store/write-log.js';
import { formatTable } from './format-table.js';
import { parseFlags } from './parse-flags.js';

const HELP = `usage: understudy writes failed --config FILE [--json]
       understudy writes show <jobId> --config FILE
       understudy writes retry <jobId>... | --all  --config FILE [--resend] [--json]

Failed writes (Redis: REDIS_URL, else config redis.url; details from write_log in the config's database).

  failed          lists failed write jobs with their reasons, and bulk writes that completed as partial
  show <jobId>    prints one write job as JSON: state, data, progress, reason, result and its write_log row
  retry <jobId>   queues a failed write again (fresh attempts, behind writes already queued for its record);
                  a partial bulk write is replayed for the records that failed; --all retries everything
                  \`writes failed\` lists

  --config FILE   JSON config (redis, database)
  --json          machine-readable output
  --resend        retry: forget an earlier unknown outcome, so a create is sent without looking for its record
`;

const FLAGS = {
  config: { type: 'string' },
  json: { type: 'boolean' },
  all: { type: 'boolean' },
  resend: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

const target = (f: FailedWrite) => `${f.tenant}/${f.collection}${f.recordId ? `/${f.recordId}` : ''}`;

export async function writesCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, FLAGS, true);
  const [sub, ...args] = positionals;
  if (values.help || !sub) {
    process.stdout.write(HELP);
    return values.help ? 0 : 2;
  }
  if (!['failed', 'show', 'retry'].includes(sub))
    throw new UsageError(`unknown subcommand "${sub}" (failed, show, retry)`);
  if (!values.config) throw new UsageError('--config FILE is required');
  if (sub === 'show' && args.length !== 1) throw new UsageError('writes show takes one job id');
  if (sub === 'retry' && (values.all ? args.length > 0 : args.length === 0))
    throw new UsageError('writes retry takes job ids or --all');
  if (sub === 'failed' && args.length > 0) throw new UsageError('writes failed takes no arguments');

  const config = loadConfigFile(values.config);
  const { url, prefix } = redisSettings(config, process.env);
  const database = databasePath(config, process.env);
  const redis = await shortLivedRedis(url, 3000, { maxRetriesPerRequest: 3, enableOfflineQueue: true });
  const queue = openWritesQueue(redis, prefix);
  let writeLog: WriteLog | null = null;
  try {
    writeLog = existsSync(database) ? await openSqliteWriteLog(database) : null;
    if (sub === 'failed') {
      const failed = await listFailedWrites(queue, writeLog);
      if (values.json) process.stdout.write(`${JSON.stringify(failed, null, 2)}\n`);
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
    if (sub === 'show') {
      const details = await showWrite(queue, writeLog, args[0] as string);
      process.stdout.write(`${JSON.stringify(details, null, 2)}\n`);
      return 0;
    }
    const order = createRecordOrder({ redis, prefix, isPending: (id) => isPendingJob(queue, id) });
    // --all: every failed job, and every partial bulk write not replayed yet (what `writes failed` lists).
    const ids = values.all ? (await listFailedWrites(queue, writeLog)).map((f) => f.jobId) : args;
    const results: RetryResult[] = [];
    for (const id of ids) {
      results.push(await retryWrite(queue, order, writeLog, id, values.resend ? { resend: true } : {}));
    }
    if (values.json) process.stdout.write(`${JSON.stringify(results)}\n`);
    else if (results.length === 0) process.stdout.write('no failed writes to retry\n');
    else {
      for (const r of results) {
        process.stdout.write(r.how === 'requeued' ? `${r.jobId} requeued\n` : `${r.jobId} replayed as ${r.runs}\n`);
      }
    }
    return 0;
  } finally {
    await writeLog?.close();
    await queue.close().catch(() => undefined);
    await redis.quit().catch(() => redis.disconnect());
  }
}
