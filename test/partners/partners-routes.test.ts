import { describe, expect, it } from 'vitest';
import type { CallOptions } from '../../src/partners/partners-client.js';
import { partnersRoutes } from '../../src/partners/partners-routes.js';
import type { Send, UpstreamCall } from '../../src/partners/upstream-call.js';
import { recordId, tenantSlug } from '../../src/vocabulary/ids.js';

/** A `send` that records each call and answers what its shape makes of `json`. */
function recording(json: unknown) {
  const calls: UpstreamCall[] = [];
  const send = (async (call: UpstreamCall, _opts: CallOptions) => {
    calls.push(call);
    const shaped = call.shape(json);
    if (!shaped.ok) throw new Error(shaped.message);
    return shaped.value;
  }) as Send;
  return { send, calls };
}

const opts = { signal: new AbortController().signal };
/** Route tests send no sequence: a reservation is never asked for. */
const noReserve = () => Promise.reject(new Error('no reservation in a route test'));
const row = (c: UpstreamCall) =>
  `${c.method} ${c.path} ${c.route} ${c.auth ? 'key' : 'public'}${c.body ? ' body' : ''}`;

describe('partners route table', () => {
  it('makes one request per method: method, path, route template, key and body', async () => {
    const { send, calls } = recording({ doc: { id: 1 }, message: 'ok' });
    const client = partnersRoutes(tenantSlug('acme'), send, noReserve);
    expect(client.tenant).toBe('acme');
    await client.getById('series', recordId('a/b'), { depth: 0 }, opts);
    await client.themeSettingsSchema('events', opts);
    await client.openapi(opts);
    await client.create('series', { slug: 's' }, { draft: true }, opts);
    await client.update('seasons', recordId('8'), 'PUT', { title: 't' }, {}, opts);
    await client.delete('event-instances', recordId('9'), opts);
    await client.bulk('series', 'custom-attributes', { all: true }, { draft: true }, opts);
    expect(calls.map(row)).toEqual([
      'GET /partners/2026-02/acme/series/a%2Fb?depth=0 /partners/{version}/{tenant}/series/{id} key',
      'GET /partners/2026-02/acme/events/theme-settings/schema /partners/{version}/{tenant}/events/theme-settings/schema key',
      'GET /partners/2026-02/openapi /partners/{version}/openapi public',
      'POST /partners/2026-02/acme/series?draft=true /partners/{version}/{tenant}/series key body',
      'PUT /partners/2026-02/acme/seasons/8 /partners/{version}/{tenant}/seasons/{id} key body',
      'DELETE /partners/2026-02/acme/event-instances/9 /partners/{version}/{tenant}/event-instances/{id} key',
      'PATCH /partners/2026-02/acme/series/custom-attributes?draft=true /partners/{version}/{tenant}/series/custom-attributes key body',
    ]);
  });

  it('reads writes as the record ({doc, message} unwrapped) and lists as the normalised envelope', async () => {
    const write = recording({ doc: { id: 7 }, message: 'Created' });
    expect(await partnersRoutes(tenantSlug('acme'), write.send, noReserve).create('series', {}, {}, opts)).toEqual({
      id: 7,
    });
    const bare = recording({ id: 8, doc: { nested: true } });
    expect(
      await partnersRoutes(tenantSlug('acme'), bare.send, noReserve).delete('series', recordId('8'), opts),
    ).toEqual({
      id: 8,
      doc: { nested: true },
    });
    const list = recording({ docs: [{ id: 1 }], totalDocs: '1' });
    const page = await partnersRoutes(tenantSlug('acme'), list.send, noReserve).listPage(
      { collection: 'series', limit: 5 },
      opts,
    );
    expect(list.calls.map(row)).toEqual([
      'GET /partners/2026-02/acme/series?limit=5 /partners/{version}/{tenant}/series key',
    ]);
    expect(page).toMatchObject({ docs: [{ id: 1 }], totalDocs: 1, limit: 5, page: 1, hasNextPage: false });
  });

  it('refuses an empty tenant', () => {
    expect(() => partnersRoutes(tenantSlug('acme').slice(0, 0) as never, recording({}).send, noReserve)).toThrow(
      /tenant must be non-empty/,
    );
  });
});
