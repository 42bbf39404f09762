import { defineCommand, shared } from '../parse-flags.js';

export const SYNC_SPEC = defineCommand({
  name: 'sync',
  summary: 'mirror tenants into SQLite or PostgreSQL',
  usage: '[--config FILE | --base-url URL --tenant SLUG...] [--collection NAME]... [--full] [--watch] [options]',
  about:
    'Mirrors tenants of the Content Partners API into SQLite or PostgreSQL (--db postgres://…). Without --config, the key comes from PARTNERS_API_KEY, ' +
    'the base URL from --base-url or PARTNERS_BASE_URL, the database from --db, UNDERSTUDY_DB or ./data/understudy.db. ' +
    'On a terminal it shows its progress; off one, logs (JSON lines) and the summary table, and with --quiet nothing ' +
    'at all unless something is wrong.',
  flags: {
    config: shared('config', {
      help: "JSON config listing tenants (keys are named by apiKeyEnv, never written in the file); a relative database in it is read from the config file's folder",
    }),
    'base-url': { type: 'string', value: 'URL', help: 'upstream origin, e.g. https://partners.example.org' },
    tenant: {
      type: 'string',
      multiple: true,
      value: 'SLUG',
      help: 'tenant to sync (repeatable; default: every tenant of the config)',
    },
    collection: {
      type: 'string',
      multiple: true,
      value: 'NAME',
      help: 'collection to sync: its API path (event-instances) or its table (event_instances); repeatable; default: all',
    },
    full: {
      type: 'boolean',
      help: 'full sync with deletion reconciliation (default: incremental since the stored cursor)',
    },
    db: shared('db'),
    json: shared('json', { help: 'print exactly one JSON object with the outcome on stdout' }),
    'local-budget': {
      type: 'boolean',
      help: "pace each key with this process's own rate gate even when Redis is configured (default: with config redis or REDIS_URL, the key's budget is shared there with the workers)",
    },
    enqueue: {
      type: 'boolean',
      help: 'add a sync job to the worker queue (Redis) instead of syncing here; prints its id',
    },
    schedule: {
      type: 'string',
      optionalValue: true,
      value: 'CRON',
      help: "keep running, no Redis, runs never overlap. Alone: the config's schedules (each tenant's incrementalEveryMinutes, the first at once, and fullCron, in its schedule.timezone). With CRON: a sync of every tenant on each tick, read in each tenant's schedule.timezone (else the process's zone)",
    },
    watch: {
      type: 'boolean',
      help: "after this sync, keep the chosen tenants live until SIGTERM or Ctrl-C (exit 0), no Redis needed: each collection probed, a change upstream mirrored within seconds (config watch's knobs; the defaults where the config leaves watch off). See docs/watch.md",
    },
    wait: {
      type: 'number',
      min: 0,
      unit: 'seconds',
      value: 'SECONDS',
      help: 'wait up to SECONDS for a collection another run holds (default 0: report it skipped, "locked by another run", and exit 75 when nothing else failed)',
    },
  },
  footer:
    'Exit codes: 0 done; 1 a collection failed; 2 bad usage or config; 3 a key refused (the other tenants still run);\n' +
    '4 upstream unavailable; 75 skipped (another run holds the lock); 130 stopped. See docs/errors.md.\n',
});
