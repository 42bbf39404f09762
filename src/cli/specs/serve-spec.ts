import { defineCommand, shared } from '../parse-flags.js';

export const SERVE_SPEC = defineCommand({
  name: 'serve',
  summary: 'an HTTP API for apps in any language: writes, their state, the change feed',
  usage: '--config FILE [--port N] [--host HOST] [--http PORT] [options]',
  about:
    'Serves the writes of the Partners API at its own paths (PATCH /partners/2026-02/{tenant}/event-instances/{id}, ' +
    '…): each is validated as `enqueue` validates it and queued for the worker, answered 202 with its job, or with ' +
    "the upstream's answer under `Prefer: wait=N`. Also GET /v1/writes/{id}, GET /v1/changes and the change stream " +
    '/v1/changes/stream (Server-Sent Events). Every request needs a token of config api.tokens (Authorization: ' +
    'Bearer <token>, or users API-Key <token>). Redis as the worker (REDIS_URL, else config redis.url); the mirror ' +
    "of the config's database. GET /v1/openapi.json describes it all; docs/api.md has examples. SIGTERM or SIGINT: " +
    'stop taking requests, end open streams, let requests in flight finish, exit 0.',
  flags: {
    config: shared('config', { required: true, help: 'JSON config (tenants, redis, database, api.tokens)' }),
    port: { type: 'int', min: 0, max: 65535, value: 'N', help: 'port to listen on (default 8080; 0: any free port)' },
    host: {
      type: 'string',
      value: 'HOST',
      help: 'interface to listen on (default 127.0.0.1: this host only; 0.0.0.0 for all, behind a TLS proxy)',
    },
    http: {
      type: 'int',
      min: 0,
      max: 65535,
      value: 'PORT',
      help: 'serve /healthz, /readyz and /metrics (request counts and latency by route) on PORT (off by default)',
    },
    'http-host': {
      type: 'string',
      requires: ['http'],
      value: 'HOST',
      help: 'interface --http listens on (default 127.0.0.1)',
    },
  },
  footer:
    'SIGHUP re-reads the config and the tokens (the environment, plus the env file: --env-file or\n' +
    'UNDERSTUDY_ENV_FILE): a rotated token takes effect without a restart. See docs/api.md.\n',
});
