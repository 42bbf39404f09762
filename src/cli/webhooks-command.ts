import { existsSync } from 'node:fs';
import { createApp } from '../app/create-app.js';
import { endpointsOf, safeUrl } from '../changes/webhook-endpoints.js';
import { databasePath } from '../config/database-path.js';
import { loadConfigFile } from '../config/load-config.js';
import { ConfigError, UnderstudyError, UsageError } from '../errors.js';

import { listFailedWebhooks, openWebhookQueue, retryWebhook, showWebhook } from '../queue/webhook-queue.js';
import { openMirror } from '../store/open-mirror.js';
import { isPostgresUrl } from '../store/postgres-engine.js';
import { formatTable } from './format-table.js';
import { COMMON_FLAGS, type CommandSpec, type Flags, helpText, parseFlags } from './parse-flags.js';

const FLAGS = {
  config: { type: 'string', value: 'FILE', help: "JSON config (redis, database, tenants' webhooks)" },
  json: { type: 'boolean', help: 'machine-readable output' },
  all: { type: 'boolean', help: 'retry: every batch `webhooks failed` lists' },
  ...COMMON_FLAGS,
} as const satisfies Flags;

const SPEC: CommandSpec<typeof FLAGS> = {
  name: 'webhooks',
  usage: 'failed|show <jobId>|retry <jobId>...|retry --all|enable <endpoint> --config FILE [options]',
  about:
    'Webhook batches dead-lettered after their last attempt (or answered 410), handled as failed writes are ' +
    '(Redis: REDIS_URL, else config redis.url); and endpoints a 410 disabled (the mirror).',
  operands: true,
  flags: FLAGS,
  footer: `Subcommands:
  failed             lists dead-lettered batches: endpoint, seq range, attempts, reason
  show <jobId>       prints one batch job as JSON: state, attempts, reason, and the changes it carries
  retry <jobId>      sends a dead-lettered batch again, fresh attempts, same body and webhook-id (it arrives after
                     the endpoint's later batches: receivers order by seq); --all retries every one listed
  enable <endpoint>  enables an endpoint a 410 disabled (its id, ep_…, as status shows it, or its URL); it goes on
                     after the batch that got the 410
`,
};

const SUBS = ['failed', 'show', 'retry', 'enable'];

export async function webhooksCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, SPEC);
  const [sub, ...args] = positionals;
  if (values.help || !sub) {
    (values.help ? process.stdout : process.stderr).write(helpText(SPEC));
    return values.help ? 0 : 2;
  }
  if (!SUBS.includes(sub)) throw new UsageError(`unknown subcommand "${sub}" (${SUBS.join(', ')})`);
  if (!values.config) throw new UsageError('--config FILE is required');
  if ((sub === 'show' || sub === 'enable') && args.length !== 1)
    throw new UsageError(`webhooks ${sub} takes one argument`);
  if (sub === 'retry' && (values.all ? args.length > 0 : args.length === 0))
    throw new UsageError('webhooks retry takes job ids or --all');
  if (sub === 'failed' && args.length > 0) throw new UsageError('webhooks failed takes no arguments');
  const config = loadConfigFile(values.config);

  if (sub === 'enable') {
    const wanted = args[0] as string;
    const endpoint = endpointsOf(config).find((e) => e.id === wanted || e.url === wanted);
    const database = databasePath(config, process.env);
    // The mirror is changed, so opened writable; it is never created here.
    if (!isPostgresUrl(database) && !existsSync(database))
      throw new ConfigError(`database ${database} does not exist (run \`understudy sync\` first)`);
    const mirror = await openMirror(database);
    try {
      if (!(await mirror.changes.enableEndpoint(endpoint?.id ?? wanted)))
        throw new UnderstudyError('US_VALIDATION', `no webhook endpoint ${wanted} in the mirror`);
    } finally {
      await mirror.close();
    }
    process.stdout.write(`${endpoint?.id ?? wanted} enabled\n`);
    return 0;
  }

  await using app = await createApp(config, process.env, { profile: 'queue' });
  const queue = openWebhookQueue(app.redis, app.redisSettings.prefix);
  queue.on('error', () => {});
  try {
    const urls = new Map(endpointsOf(config).map((e) => [e.id, safeUrl(e.url)]));
    if (sub === 'failed') {
      const failed = await listFailedWebhooks(queue);
      if (values.json) process.stdout.write(`${JSON.stringify(failed, null, 2)}\n`);
      else if (failed.length === 0) process.stdout.write('no failed webhook batches\n');
      else {
        const rows = failed.map((f) => ({
          job: f.jobId,
          endpoint: urls.get(f.endpoint) ?? f.endpoint,
          seq: `${f.firstSeq}-${f.lastSeq}`,
          changes: String(f.changes),
          attempts: String(f.attempts),
          at: f.failedAt ?? '',
          reason: f.reason,
        }));
        process.stdout.write(`${formatTable(rows, { maxCell: 240 })}\n`);
      }
      return 0;
    }
    if (sub === 'show') {
      process.stdout.write(`${JSON.stringify(await showWebhook(queue, args[0] as string), null, 2)}\n`);
      return 0;
    }
    const ids = values.all ? (await listFailedWebhooks(queue)).map((f) => f.jobId) : args;
    for (const id of ids) await retryWebhook(queue, id);
    if (values.json) process.stdout.write(`${JSON.stringify(ids.map((jobId) => ({ jobId, how: 'requeued' })))}\n`);
    else if (ids.length === 0) process.stdout.write('no failed webhook batches to retry\n');
    else for (const id of ids) process.stdout.write(`${id} requeued\n`);
    return 0;
  } finally {
    await queue.close().catch(() => undefined);
  }
}
