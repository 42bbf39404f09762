import { defineCommand, shared } from '../parse-flags.js';

export const WEBHOOKS_SPEC = defineCommand({
  name: 'webhooks',
  summary: 'dead-lettered webhook batches: list, show, retry; enable an endpoint',
  usage: 'failed|show <jobId>|retry <jobId>...|retry --all|enable <endpoint> --config FILE [options]',
  about:
    'Webhook batches dead-lettered after their last attempt (or answered 410), handled as failed writes are ' +
    '(Redis: REDIS_URL, else config redis.url); and endpoints a 410 disabled (the mirror).',
  flags: {
    config: shared('config', {
      required: true,
      help: "JSON config (redis, database, tenants' webhooks)",
    }),
    json: shared('json'),
    all: { type: 'boolean', help: 'retry: every batch `webhooks failed` lists' },
  },
  subcommands: {
    failed: {
      usage: 'failed',
      help: 'lists dead-lettered batches: endpoint, seq range, attempts, reason',
      operands: 'none',
    },
    show: {
      usage: 'show <jobId>',
      help: 'prints one batch job as JSON: state, attempts, reason, and the changes it carries',
      operands: 'one',
    },
    retry: {
      usage: 'retry <jobId>',
      help:
        "sends a dead-lettered batch again, fresh attempts, same body and webhook-id (it arrives after the endpoint's " +
        'later batches: receivers order by seq); --all retries every one listed',
      operands: 'ids-or-all',
    },
    enable: {
      usage: 'enable <endpoint>',
      help:
        'enables an endpoint a 410 disabled (its id, ep_…, as status shows it, or its URL); it goes on after the ' +
        'batch that got the 410',
      operands: 'one',
    },
  },
});
