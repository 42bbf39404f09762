import { defineCommand, shared } from '../parse-flags.js';

export const STATUS_SPEC = defineCommand({
  name: 'status',
  summary: 'mirror freshness, schedules and queue counts; --check for monitoring',
  usage: '[--config FILE | --db FILE] [--check [--max-age DURATION]] [--json] [options]',
  about:
    'Per tenant and collection: live and deleted rows, the age of the last success, the last error; the next ' +
    'scheduled runs, per queue waiting, active, delayed, failed and completed jobs, and the `serve` processes seen in ' +
    'the last minute (host, pid, URL) when Redis is configured ' +
    '(config redis, or REDIS_URL): it is not looked for otherwise. When Redis does not answer (2 s), the mirror ' +
    'part is still printed. The mirror is opened read-only and never created or migrated: a --db that does not ' +
    'exist, or is not a mirror of this version, is an error (exit 2; with --check, a missing mirror is a finding, ' +
    'exit 7). Without --check the exit code is 0 either way; --check makes it a health check.',
  flags: {
    config: shared('config', {
      help: "JSON config (database, tenants, redis); a relative database in it is read from the config file's folder",
    }),
    db: shared('db'),
    json: shared('json', { help: 'print one JSON object on stdout (with --check, its findings under "check")' }),
    check: {
      type: 'boolean',
      help: "exit non-zero when something needs a look: 7 the mirror is missing (or a configured tenant has nothing in it), 5 a collection's last run failed, 6 a last success older than --max-age; one line each on stderr",
    },
    'max-age': {
      type: 'string',
      value: 'DURATION',
      help: 'with --check: the oldest a last success may be, e.g. 3600 (seconds), 90m, 2h, 1d, PT2H (default: no limit)',
    },
  },
  footer:
    "Exit codes with --check: 0 healthy; 5 a collection's last run failed; 6 a last success older than --max-age\n" +
    '(or none yet); 7 the mirror is missing, or a configured tenant has nothing in it (worst first: 7, 5, 6);\n' +
    '2 bad usage or config. See docs/errors.md.\n',
});
