import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';

const KEY = 'sk_live_7f3a9c2e41b84d0f9a6e5c3b2d1f0e9a';

/** A logger writing into a string, at debug so every line shows. */
function capture() {
  let out = '';
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      out += chunk.toString();
      cb();
    },
  });
  const log = createLogger({ level: 'debug', destination });
  return { log, text: () => out };
}

describe('log redaction', () => {
  it('never prints a key logged under the usual names, at the top level or one level down', () => {
    const { log, text } = capture();
    const names = [
      'apiKey',
      'api_key',
      'apikey',
      'key',
      'token',
      'accessToken',
      'dashboardToken',
      'secret',
      'password',
      'authorization',
      'Authorization',
    ];
    for (const name of names) {
      log.info({ [name]: KEY }, `top-level ${name}`);
      log.info({ tenant: { slug: 'acme', [name]: KEY } }, `nested ${name}`);
    }
    const out = text();
    expect(out).not.toContain(KEY);
    expect(out.split('\n').filter(Boolean)).toHaveLength(names.length * 2);
    expect(out.match(/\[redacted\]/g)).toHaveLength(names.length * 2);
  });

  it('never prints Authorization, API-key or cookie headers, bare or inside a request or error', () => {
    const { log, text } = capture();
    const headers = {
      authorization: `users API-Key ${KEY}`,
      'x-api-key': KEY,
      cookie: `session=${KEY}`,
      accept: 'application/json',
    };
    log.warn({ headers }, 'headers');
    log.warn({ req: { method: 'GET', url: '/partners/2026-02/acme/series', headers } }, 'request');
    log.warn({ request: { headers } }, 'request, other name');
    log.error({ err: { message: 'boom', headers } }, 'error with headers');
    log.debug({ headers: { Authorization: `Bearer ${KEY}` } }, 'capitalised header name');
    const out = text();
    expect(out).not.toContain(KEY);
    // The rest of the line survives: redaction is by path, not by dropping the object.
    expect(out).toContain('application/json');
    expect(out).toContain('/partners/2026-02/acme/series');
  });

  it('does not log the resolved tenant key when a tenant object is logged whole', () => {
    const { log, text } = capture();
    const tenant = { slug: 'acme', apiKey: KEY, apiKeyEnv: 'ACME_KEY', budget: { reads: 100, writes: 20 } };
    log.info({ tenant }, 'tenant');
    log.info(tenant, 'tenant bindings');
    log.child({ tenant: 'acme' }).info({ apiKey: KEY }, 'child');
    const out = text();
    expect(out).not.toContain(KEY);
    expect(out).toContain('ACME_KEY');
  });
});
