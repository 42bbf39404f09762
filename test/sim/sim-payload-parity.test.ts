import { describe, expect, it } from 'vitest';
import { createMemoryRateGate } from '../../src/partners/memory-rate-gate.js';
import { type JsonObject, type JsonValue, recordId, tenantSlug } from '../../src/vocabulary/ids.js';
import { testPool } from '../helpers/http-pool.js';
import { createHttpPartnersClient } from '../helpers/partners-client.js';
import { type Api, docsOf, openSim } from './sim-helpers.js';

// Issue 27 (3): the probes where a real Payload CMS 3 behind the partner path answered otherwise. Each talks HTTP
// to a simulator; docs/simulator.md's "Choices where the spec is silent" names the Payload source of each.

const q = (o: Record<string, string>): string => new URLSearchParams(o).toString();
const ids = (docs: JsonObject[]): string[] => docs.map((d) => String(d.id));
const obj = (v: JsonValue | undefined): JsonObject => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`not an object: ${JSON.stringify(v)}`);
  return v;
};
const isId = (v: JsonValue | undefined): boolean => typeof v === 'string';
const joined = (doc: JsonObject, field: string): JsonValue[] => obj(doc[field]).docs as JsonValue[];

/** The first record of `c` (id order, depth 0) that `pick` accepts. */
async function firstWhere(api: Api, c: string, pick: (d: JsonObject) => boolean): Promise<JsonObject> {
  const d = docsOf(await api.get(`${c}?limit=0&depth=0&sort=id`)).find(pick);
  if (!d) throw new Error(`no ${c} to test with`);
  return d;
}

describe('relationship population by depth (Payload afterRead: relationships to depth, joins maxDepth 1)', () => {
  it('depth=1 populates the record’s relationships and joins; everything inside them stays an id', async () => {
    const api = await openSim();
    const s = await firstWhere(api, 'series', (d) => joined(d, 'event-instances').length > 0);
    const one = (await api.get(`series/${s.id}?depth=1`)).json;
    expect(obj(one.tenant).slug).toBe(api.tenant);
    const instance = obj(joined(one, 'event-instances')[0]);
    expect(instance.id).toBe(joined(s, 'event-instances')[0]);
    for (const f of ['event', 'venue', 'tenant']) expect(isId(instance[f]), f).toBe(true);
    expect((instance.series as JsonValue[]).every(isId)).toBe(true);
  });

  it('depth=2 populates relationships two levels deep, but a join only on the requested record, one level', async () => {
    const api = await openSim();
    const s = await firstWhere(api, 'series', (d) => joined(d, 'event-instances').length > 0);
    const two = (await api.get(`series/${s.id}?depth=2`)).json;
    // The join's records are read with depth 1 (its maxDepth): their relationships are ids, not records.
    const instance = obj(joined(two, 'event-instances')[0]);
    for (const f of ['event', 'venue', 'tenant']) expect(isId(instance[f]), f).toBe(true);
    // Relationships: level 1 and level 2 are records, level 3 ids; a join inside a populated record: ids.
    const ei = await firstWhere(api, 'event-instances', (d) => isId(d.event));
    const deep = (await api.get(`event-instances/${ei.id}?depth=2`)).json;
    const event = obj(deep.event);
    expect(event.id).toBe(ei.event);
    expect(obj(event.tenant).slug).toBe(api.tenant);
    if (event.venue !== null) expect(isId(obj(event.venue).image) || obj(event.venue).image === null).toBe(true);
    expect(joined(event, 'event-instances').every(isId)).toBe(true);
    expect(joined(event, 'event-instances')).toContain(ei.id);
  });

  it('answers the same by id and in lists, and depth omitted is depth=2 (Payload’s defaultDepth)', async () => {
    const api = await openSim();
    for (const c of ['series', 'event-instances', 'events', 'seasons']) {
      const listed = docsOf(await api.get(`${c}?limit=3&sort=id`));
      expect(listed, c).toEqual(docsOf(await api.get(`${c}?limit=3&sort=id&depth=2`)));
      for (const d of listed) expect((await api.get(`${c}/${d.id}`)).json, `${c}/${d.id}`).toEqual(d);
    }
    const zero = docsOf(await api.get('series?limit=3&sort=id&depth=0'));
    for (const d of zero) expect(joined(d, 'event-instances').every(isId)).toBe(true);
  });
});

describe('empty strings', () => {
  it('a nested field PATCHed to "" is stored as "", answered in the bare record, and exists=false finds it', async () => {
    const api = await openSim();
    const ei = await firstWhere(api, 'event-instances', (d) => obj(d.booking).bookingLinkLabel !== '');
    const r = await api.req('PATCH', `event-instances/${ei.id}?depth=0`, { booking: { bookingLinkLabel: '' } });
    expect(r.status).toBe(200);
    // The spec's update answer: the record itself, not Payload's {doc, message}.
    expect(r.json.doc).toBeUndefined();
    expect(r.json.id).toBe(ei.id);
    expect(r.json.booking).toEqual({ ...obj(ei.booking), bookingLinkLabel: '' });
    expect((await api.get(`event-instances/${ei.id}?depth=0`)).json.booking).toEqual(r.json.booking);
    const where = (exists: string) =>
      `event-instances?limit=0&depth=0&${q({ 'where[booking.bookingLinkLabel][exists]': exists })}`;
    expect(ids(docsOf(await api.get(where('false'))))).toContain(ei.id);
    expect(ids(docsOf(await api.get(where('true'))))).not.toContain(ei.id);
  });

  it('"" for a number or a date is stored as null (Payload’s sanitizing, then the MongoDB cast)', async () => {
    const api = await openSim();
    const m = docsOf(await api.get('media?limit=1&depth=0&sort=filename'))[0] as JsonObject;
    const r = await api.req('PATCH', `media/${m.filename}?depth=0`, { focalX: '' });
    expect(r.status, r.text).toBe(200);
    expect(r.json.focalX).toBeNull();
    const ei = await firstWhere(api, 'event-instances', () => true);
    const d = await api.req('PATCH', `event-instances/${ei.id}?depth=0`, { startDateLocalAsUTC: '' });
    expect(d.status, d.text).toBe(200);
    expect(d.json.startDateLocalAsUTC).toBeNull();
  });
});

describe('locale=all', () => {
  it('on a collection without localized fields answers plain values, as the default locale does', async () => {
    const api = await openSim();
    for (const c of ['event-instances', 'redirects', 'custom-attributes']) {
      const plain = docsOf(await api.get(`${c}?limit=5&depth=0&sort=id`));
      expect(docsOf(await api.get(`${c}?limit=5&depth=0&sort=id&locale=all`)), c).toEqual(plain);
      const first = plain[0] as JsonObject;
      expect((await api.get(`${c}/${first.id}?depth=0&locale=all`)).json, c).toEqual(first);
    }
    // Populated records keep their own localized fields as {en, fr} objects.
    const ei = await firstWhere(api, 'event-instances', (d) => isId(d.event));
    const all = (await api.get(`event-instances/${ei.id}?depth=1&locale=all`)).json;
    expect(all.startDate).toBe(ei.startDate);
    expect(obj(obj(all.event).title).en).toEqual(expect.any(String));
  });
});

describe('DELETE by id', () => {
  it('answers {doc, message: "Deleted successfully."} with the record as it was, then 404', async () => {
    const api = await openSim();
    const ei = await firstWhere(api, 'event-instances', (d) => isId(d.event));
    const before = (await api.get(`event-instances/${ei.id}`)).json;
    const del = await api.req('DELETE', `event-instances/${ei.id}`);
    expect(del.status).toBe(200);
    expect(del.json).toEqual({ doc: before, message: 'Deleted successfully.' });
    const again = await api.req('DELETE', `event-instances/${ei.id}`);
    expect(again.status).toBe(404);
    expect(again.json).toEqual({ errors: [{ message: 'Not Found' }] });
  });

  it('is accepted by understudy’s client, which returns the record', async () => {
    const api = await openSim();
    const ei = await firstWhere(api, 'event-instances', () => true);
    const client = createHttpPartnersClient({
      baseUrl: api.sim.url,
      tenant: tenantSlug(api.tenant),
      apiKey: api.key,
      gate: createMemoryRateGate({ reads: 1000, writes: 1000, windowMs: 1000 }),
      dispatcher: testPool(),
    });
    const doc = await client.delete('event-instances', recordId(String(ei.id)), {
      signal: new AbortController().signal,
    });
    expect(doc.id).toBe(ei.id);
  });
});

describe('collection-level PATCH with an invalid value', () => {
  it('answers 400 with the records that changed, {id, isPublic, message} per failure, and a summary', async () => {
    const api = await openSim();
    const two = ids(docsOf(await api.get('series?limit=2&depth=0&sort=id')));
    const where = q({ 'where[id][in]': two.join(','), depth: '0' });
    // Valid for the first record processed, a duplicate for the second.
    const clash = await api.req('PATCH', `series?${where}`, { slug: 'one-slug-for-two' });
    expect(clash.status).toBe(400);
    expect(Object.keys(clash.json)).toEqual(['docs', 'errors', 'message']);
    expect(clash.json.message).toBe('Unable to update 1 out of 2 Series.');
    const [changed] = docsOf(clash);
    expect(changed?.slug).toBe('one-slug-for-two');
    const errors = clash.json.errors as JsonObject[];
    expect(errors).toEqual([
      { id: two.find((id) => id !== changed?.id), isPublic: true, message: 'The following field is invalid: Slug' },
    ]);
    // Invalid for every record: nothing changes, one error each.
    const events = ids(docsOf(await api.get('events?limit=2&depth=0&sort=id')));
    const bad = await api.req('PATCH', `events?${q({ 'where[id][in]': events.join(',') })}`, { startDate: 'soon' });
    expect(bad.status).toBe(400);
    expect(bad.json.docs).toEqual([]);
    expect(bad.json.message).toBe('Unable to update 2 out of 2 Events.');
    expect((bad.json.errors as JsonObject[]).map((e) => [e.id, e.isPublic])).toEqual(
      expect.arrayContaining(events.map((id) => [id, true])),
    );
    for (const e of bad.json.errors as JsonObject[]) expect(e.message).toMatch(/^The following field is invalid: /);
  });
});
