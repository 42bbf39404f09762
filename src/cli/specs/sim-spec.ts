import { defineCommand } from '../parse-flags.js';

export const SIM_SPEC = defineCommand({
  name: 'sim',
  summary: 'run the Partners API simulator',
  about:
    'Runs the Content Partners API simulator until SIGINT/SIGTERM. Prints its URL and one "tenant <slug> key <KEY>" ' +
    'line per tenant (not with --quiet).',
  flags: {
    port: { type: 'string', value: 'N', help: 'port to listen on (default 0: a free port)' },
    host: { type: 'string', value: 'HOST', help: 'address to bind (default 127.0.0.1)' },
    seed: { type: 'string', value: 'N', help: 'data seed (default 1)' },
    tenants: { type: 'string', value: 'N', help: 'number of tenants (default 2)' },
    records: { type: 'string', value: 'N', help: 'records per collection (default 40; event instances get 3x)' },
    routes: { type: 'string', value: 'SET', help: 'documented | full (default full)' },
    'read-limit': { type: 'string', value: 'N', help: 'reads per window per key (default 100; 0 = unlimited)' },
    'write-limit': { type: 'string', value: 'N', help: 'writes per window per key (default 20; 0 = unlimited)' },
    'window-ms': { type: 'string', value: 'N', help: 'rate-limit window in ms (default 60000)' },
    'max-limit': {
      type: 'string',
      value: 'N',
      help: 'largest page size; larger limits clamp (default 100; 0: no clamp)',
    },
    key: { type: 'string', multiple: true, value: 'TENANT=KEY', help: 'use KEY for TENANT (repeatable)' },
    today: {
      type: 'boolean',
      help: 'place the programme around today (UTC) instead of 2026-01-15: the same data all day',
    },
    'updates-onto-latest': {
      type: 'boolean',
      help: 'apply updates as Payload 3 does: onto the latest version, a pending draft included, keeping its _status',
    },
  },
});
