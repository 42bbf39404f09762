import { createApp } from '../app/create-app.js';
import { endpointsOf, safeUrl } from '../changes/webhook-endpoints.js';
import type { Config } from '../config/config-schema.js';
import { loadConfigFile } from '../config/load-config.js';
import { ConfigError, UnderstudyError } from '../errors.js';
import { errorsFailTheCalls } from '../queue/error-listeners.js';
import { listFailedWebhooks, openWebhookQueue, retryWebhook, showWebhook } from '../queue/webhook-queue.js';
import { printHelp } from './command-help.js';
import { formatTable } from './format-table.js';
import { parseFlags } from './parse-flags.js';
import { WEBHOOKS_SPEC } from './specs/webhooks-spec.js';

type WebhooksValues = ReturnType<typeof parseFlags<(typeof WEBHOOKS_SPEC)['flags']>>['values'];
type WebhookQueue = ReturnType<typeof openWebhookQueue>;

export async function webhooksCommand(argv: string[]): Promise<number> {
  const { values, help, subcommand: sub, args } = parseFlags(argv, WEBHOOKS_SPEC);
  if (help) return printHelp(WEBHOOKS_SPEC, help);
  const config = loadConfigFile(values.config);
  if (sub === 'enable') return await enableCommand(config, args[0] as string, values.quiet === true);

  await using app = await createApp(config, process.env, { profile: 'queue' });
  const queue = openWebhookQueue(app.redis, app.redisSettings.prefix, errorsFailTheCalls);
  try {
    if (sub === 'failed') return await failedCommand(queue, config, values);
    if (sub === 'show') {
      process.stdout.write(`${JSON.stringify(await showWebhook(queue, args[0] as string), null, 2)}\n`);
      return 0;
    }
    const ids = values.all ? (await listFailedWebhooks(queue)).map((f) => f.jobId) : args;
    for (const id of ids) await retryWebhook(queue, id);
    if (values.json) process.stdout.write(`${JSON.stringify(ids.map((jobId) => ({ jobId, how: 'requeued' })))}\n`);
    else if (values.quiet) return 0;
    else if (ids.length === 0) process.stdout.write('no failed webhook batches to retry\n');
    else for (const id of ids) process.stdout.write(`${id} requeued\n`);
    return 0;
  } finally {
    await queue.close().catch(() => undefined);
  }
}

/** `webhooks enable <endpoint>`: the endpoint (its id or URL) a 410 disabled goes on. No Redis needed. */
async function enableCommand(config: Config, wanted: string, quiet: boolean): Promise<number> {
  const endpoint = endpointsOf(config).find((e) => e.id === wanted || e.url === wanted);
  {
    await using app = await createApp(config, process.env, { profile: 'mirror' });
    // The mirror is changed, so opened writable; it is never created here.
    const mirror = await app.writableMirror();
    if (!mirror) throw new ConfigError(`database ${app.databasePath} does not exist (run \`understudy sync\` first)`);
    if (!(await mirror.changes.enableEndpoint(endpoint?.id ?? wanted)))
      throw new UnderstudyError('US_VALIDATION', `no webhook endpoint ${wanted} in the mirror`);
  }
  if (!quiet) process.stdout.write(`${endpoint?.id ?? wanted} enabled\n`);
  return 0;
}

/** `webhooks failed`: the dead-lettered batches as a table (or JSON). */
async function failedCommand(queue: WebhookQueue, config: Config, values: WebhooksValues): Promise<number> {
  const urls = new Map(endpointsOf(config).map((e) => [e.id, safeUrl(e.url)]));
  const failed = await listFailedWebhooks(queue);
  if (values.json) process.stdout.write(`${JSON.stringify(failed, null, 2)}\n`);
  else if (values.quiet) return 0;
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
