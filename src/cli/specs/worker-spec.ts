import { defineCommand, shared } from '../parse-flags.js';

export const WORKER_SPEC = defineCommand({
  name: 'worker',
  summary: 'run sync workers on the Redis queue, with schedules',
  usage: '--config FILE [--concurrency N] [--http PORT] [--http-host HOST] [options]',
  about:
    'Runs sync workers on the Redis queue (REDIS_URL, else config redis.url, else redis://127.0.0.1:6379): the ' +
    'schedules of the config fire once per tick however many workers run, and jobs added by `understudy sync ' +
    '--enqueue` are processed. SIGTERM or SIGINT: stop taking jobs, let each active sync commit its page, close ' +
    'everything and exit 0.',
  flags: {
    config: shared('config', {
      required: true,
      help: "JSON config (tenants, schedule, redis, worker); a relative database in it is read from the config file's folder",
    }),
    concurrency: {
      type: 'int',
      min: 1,
      value: 'N',
      help: 'jobs run at once in this process (default: config worker.concurrency, else 2)',
    },
    http: {
      type: 'int',
      min: 0,
      max: 65535,
      value: 'PORT',
      help: 'serve /, /healthz, /readyz, /metrics and the queue dashboard /queues on PORT (off by default; the dashboard needs UNDERSTUDY_DASHBOARD_TOKEN)',
    },
    'http-host': {
      type: 'string',
      requires: ['http'],
      value: 'HOST',
      help: 'interface --http listens on (default 127.0.0.1: this host only; 0.0.0.0 for all)',
    },
  },
  footer:
    'SIGHUP re-reads the config and the keys (the environment, plus the env file: --env-file or UNDERSTUDY_ENV_FILE):\n' +
    'new tenants, schedules and rotated keys take effect without a restart. See docs/operations.md.\n',
});
