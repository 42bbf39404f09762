import { defineCommand, shared } from '../parse-flags.js';

export const WRITES_SPEC = defineCommand({
  name: 'writes',
  summary: 'failed writes: list, show, retry',
  usage: 'failed|show <jobId>|retry <jobId>...|retry --all --config FILE [options]',
  about: "Failed writes (Redis: REDIS_URL, else config redis.url; details from write_log in the config's database).",
  flags: {
    config: shared('config', {
      required: true,
      help: 'JSON config (redis, database)',
    }),
    json: shared('json'),
    all: { type: 'boolean', help: 'retry: every write `writes failed` lists that a retry can fix' },
    'include-permanent': { type: 'boolean', help: 'retry --all: requeue permanent failures (404, 4xx) too' },
    timeout: {
      type: 'number',
      min: 0,
      unit: 'seconds',
      value: 'S',
      help: 'wait: seconds to wait at most (default: no limit)',
    },
    resend: {
      type: 'boolean',
      help: 'retry: forget an earlier unknown outcome, so a create is sent without looking for its record',
    },
  },
  subcommands: {
    failed: {
      usage: 'failed',
      help: 'lists failed write jobs with their reasons, and bulk writes that completed as partial',
      operands: 'none',
    },
    show: {
      usage: 'show <jobId>',
      help:
        'prints one write job as JSON: state (queued, running, retrying, ok, partial, failed), the outcome ' +
        "(resultId, error), BullMQ's view (queueState, data, progress) and its write_log row",
      operands: 'one',
      operand: 'job id',
    },
    wait: {
      usage: 'wait <jobId>',
      help:
        "waits for the write's outcome and prints it as `show` does; exit 0 ok, 1 failed or partial, 75 still not " +
        'done after --timeout',
      operands: 'one',
      operand: 'job id',
    },
    retry: {
      usage: 'retry <jobId>',
      help:
        'queues a failed write again (fresh attempts, behind writes already queued for its record); a partial bulk ' +
        'write is replayed for the records that failed; --all retries what `writes failed` lists that can succeed ' +
        'on a retry (5xx, timeouts, rate limits, unknown outcomes) and says which permanent failures (404, 4xx, ' +
        'refused data) it left',
      operands: 'ids-or-all',
    },
  },
});
