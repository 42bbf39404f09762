import { describe, expect, it } from 'vitest';
import { GateParkedError, type Parking, parkedBy, parkingClient } from '../../src/partners/gate-parking.js';
import type { CallOptions, PartnersClient } from '../../src/partners/partners-client.js';
import { recordId, tenantSlug } from '../../src/vocabulary/ids.js';

/** A client that records the options of each call. */
function recordingClient() {
  const seen: CallOptions[] = [];
  const answer = async (opts: CallOptions) => {
    seen.push(opts);
    return {} as never;
  };
  const client: PartnersClient = {
    tenant: tenantSlug('acme'),
    listPage: (_q, o) => answer(o),
    getById: (_c, _id, _q, o) => answer(o),
    themeSettingsSchema: (_c, o) => answer(o),
    openapi: (o) => answer(o),
    create: (_c, _b, _q, o) => answer(o),
    update: (_c, _id, _m, _b, _q, o) => answer(o),
    delete: (_c, _id, o) => answer(o),
    bulk: (_c, _k, _b, _q, o) => answer(o),
    reserve: (_counts, o) => answer(o),
  };
  return { client, seen };
}

describe('gate parking', () => {
  it("gives every request of a job's client the job's parking, and leaves the shared client's calls alone", async () => {
    const { client, seen } = recordingClient();
    const parking: Parking = { afterMs: 100, retryInMs: 500, kinds: ['read'] };
    const parked = parkingClient(client, parking);
    const opts = { signal: new AbortController().signal };
    const id = recordId('1');
    expect(parked.tenant).toBe('acme');
    await parked.listPage({ collection: 'series', limit: 1 }, opts);
    await parked.getById('series', id, {}, opts);
    await parked.themeSettingsSchema('events', opts);
    await parked.openapi(opts);
    await parked.create('series', {}, {}, opts);
    await parked.update('series', id, 'PATCH', {}, {}, opts);
    await parked.delete('series', id, opts);
    await parked.bulk('series', 'custom-attributes', {}, {}, opts);
    await client.openapi(opts);
    expect(seen.map((o) => o.parking)).toEqual([...Array(8).fill(parking), undefined]);
    expect(seen.every((o) => o.signal === opts.signal)).toBe(true);
  });

  it('finds a parked wait behind the errors that wrap it', () => {
    const parked = new GateParkedError(100, 500, 'read');
    expect(parked.message).toBe('read budget of the key exhausted: parked after waiting 100 ms');
    expect(parkedBy(new Error('outer', { cause: new Error('inner', { cause: parked }) }))).toBe(parked);
    expect(parkedBy(new Error('plain'))).toBeNull();
  });
});
