import { defineCommand, shared } from '../parse-flags.js';

export const ENQUEUE_SPEC = defineCommand({
  name: 'enqueue',
  summary: 'queue a write to the Partners API (validated first)',
  usage: '--config FILE --tenant SLUG --op OP --collection NAME [--id ID] [--body JSON | --body - | <stdin>] [options]',
  about:
    'Validates one write and adds it to the writes queue (Redis: REDIS_URL, else config redis.url); a running ' +
    '`understudy worker` applies it upstream. Prints the job id as the last line of stdout. A write the spec does ' +
    'not allow is refused with a one-line reason and exit code 2, and nothing is queued: an op or field the spec ' +
    "does not have (unless the tenant's config sets writes.allowExtraFields), a __proto__, constructor or prototype " +
    'key anywhere in the body, a body over config writes.maxBodyBytes (default 1 MiB of compact JSON), or bulk ' +
    'keys and values the mirrored custom-attribute definitions or theme-settings schema do not allow. Integers ' +
    'beyond 2^53 in the body are kept exact.',
  flags: {
    config: shared('config', { required: true, help: 'JSON config (tenants, database, redis)' }),
    tenant: { type: 'string', value: 'SLUG', required: true, help: 'tenant of the config to write to' },
    op: {
      type: 'string',
      value: 'OP',
      required: true,
      help: 'create | update | patch | put | delete | bulk (patch, put and update all mean a partial update, sent with the method the spec has for the collection)',
    },
    collection: {
      type: 'string',
      value: 'NAME',
      required: true,
      help: 'the collection: its API path (event-instances) or its table (event_instances)',
    },
    id: { type: 'string', value: 'ID', help: 'record id (update, delete)' },
    body: {
      type: 'string',
      value: 'JSON',
      help: 'the body as JSON; "-" or no --body reads it from stdin (not for delete)',
    },
    draft: { type: 'boolean', help: 'write the draft version (creates/updates of versioned collections, bulk)' },
    'idempotency-key': {
      type: 'string',
      value: 'K',
      help: "same key, same job: enqueuing again returns the first job's id",
    },
    json: shared('json', { help: 'print {"jobId": …} instead of the bare id' }),
  },
});
