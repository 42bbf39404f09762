import { describe, expect, it } from 'vitest';
import { VERSIONED } from '../../src/vocabulary/collections.js';
import type { JsonObject } from '../../src/vocabulary/ids.js';
import { type Api, docsOf, openSim } from './sim-helpers.js';

// Issue 12: where the spec is silent the simulator answers as Payload 3 does. Each test talks HTTP to a simulator.

const q = (o: Record<string, string>): string => new URLSearchParams(o).toString();
const ids = (docs: JsonObject[]): string[] => docs.map((d) => String(d.id));
const total = async (api: Api, path: string): Promise<number> => (await api.get(path)).json.totalDocs as number;

/** A never-published series: in draft=true lists, absent from published ones. */
async function draftOnly(api: Api, c: string): Promise<JsonObject> {
  const pub = new Set(ids(docsOf(await api.get(`${c}?limit=0&depth=0`))));
  const all = docsOf(await api.get(`${c}?limit=0&depth=0&draft=true`));
  const d = all.find((x) => !pub.has(String(x.id)));
  if (!d) throw new Error(`no draft-only ${c}`);
  return d;
}

describe('drafts', () => {
  it('hides never-published records from published lists and reads; draft=true shows them', async () => {
    const api = await openSim();
    const d = await draftOnly(api, 'series');
    expect(d._status).toBe('draft');
    const pub = docsOf(await api.get('series?limit=0&depth=0'));
    expect(new Set(pub.map((x) => x._status))).toEqual(new Set(['published']));
    expect(await total(api, 'series?draft=true')).toBeGreaterThan(await total(api, 'series'));
    const one = await api.get(`series/${d.id}?depth=0`);
    expect(one.status).toBe(404);
    expect(one.json).toEqual({ errors: [{ message: 'Not Found' }] });
    expect((await api.get(`series/${d.id}?depth=0&draft=true`)).json.id).toBe(d.id);
  });

  it('seeds draft-only records in every drafts-enabled collection, at every seed and size', async () => {
    for (const [seed, records] of [
      [1, 1],
      [2, 3],
      [3, 12],
      [41, 40],
    ] as const) {
      const api = await openSim({ seed, records, tenants: 1 });
      for (const c of VERSIONED) {
        const all = await total(api, `${c}?limit=1&depth=0&draft=true`);
        const pub = await total(api, `${c}?limit=1&depth=0`);
        expect(all, `${c} seed ${seed} records ${records}`).toBeGreaterThan(pub);
      }
    }
  });

  it('makes a draft of a create without _status; _status published publishes it', async () => {
    const api = await openSim();
    const draft = await api.req('POST', 'series?depth=0', { title: 'Quiet Hours' });
    expect(draft.status).toBe(201);
    expect(draft.json._status).toBe('draft');
    expect((await api.get(`series/${draft.json.id}`)).status).toBe(404);
    expect(ids(docsOf(await api.get('series?limit=0&depth=0')))).not.toContain(draft.json.id);
    expect(ids(docsOf(await api.get('series?limit=0&depth=0&draft=true')))).toContain(draft.json.id);
    const pub = await api.req('POST', 'series?depth=0', { title: 'Loud Hours', _status: 'published' });
    expect((await api.get(`series/${pub.json.id}?depth=0`)).json.title).toBe('Loud Hours');
  });
});

describe('list envelope edge cases', () => {
  const EMPTY = {
    docs: [],
    totalDocs: 0,
    totalPages: 0,
    page: 1,
    pagingCounter: 0,
    hasPrevPage: false,
    hasNextPage: false,
    prevPage: null,
    nextPage: null,
  };

  it('answers a page past the end with totalDocs 0, totalPages 0, page 1, pagingCounter 0, and an empty page 1 with pagingCounter 1', async () => {
    const api = await openSim();
    expect((await api.get('event-instances?limit=10&page=999&depth=0')).json).toEqual({ ...EMPTY, limit: 10 });
    const none = await api.get(`event-instances?depth=0&${q({ 'where[ticketingSystemId][equals]': 'nope' })}`);
    // Payload's page 1 counts from 1 whatever totalDocs is (issue 37, item 16).
    expect(none.json).toEqual({ ...EMPTY, limit: 10, pagingCounter: 1 });
  });

  it('returns every record for limit=0 and pagination=false, limit echoed 0 and totalPages 1', async () => {
    const api = await openSim();
    const n = await total(api, 'event-instances?limit=1');
    for (const p of ['limit=0', 'pagination=false']) {
      const r = await api.get(`event-instances?${p}&depth=0`);
      expect(r.json).toMatchObject({ totalDocs: n, limit: 0, totalPages: 1, page: 1, pagingCounter: 1 });
      expect(docsOf(r)).toHaveLength(n);
    }
  });

  it('applies limit and page with pagination=false', async () => {
    const api = await openSim();
    const all = ids(docsOf(await api.get('event-instances?limit=0&depth=0&sort=id')));
    const r = await api.get('event-instances?pagination=false&limit=7&page=3&depth=0&sort=id');
    expect(ids(docsOf(r))).toEqual(all.slice(14, 21));
    expect(r.json).toMatchObject({ limit: 7, totalDocs: 7, totalPages: 1, hasNextPage: false, nextPage: null });
  });

  it('clamps limit only while the simulator has a maximum (maxLimit 0: no clamp)', async () => {
    const clamped = await openSim({ maxLimit: 5 });
    expect(docsOf(await clamped.get('event-instances?limit=20&depth=0'))).toHaveLength(5);
    const open = await openSim({ maxLimit: 0 });
    const r = await open.get('event-instances?limit=20&depth=0');
    expect(docsOf(r)).toHaveLength(20);
    expect(r.json.limit).toBe(20);
  });
});

describe('query semantics', () => {
  it('exists=false matches null and an empty string (Payload on MongoDB); exists=true neither', async () => {
    const api = await openSim();
    const venues = docsOf(await api.get('venues?limit=0&depth=0&draft=true'));
    const blanks = ids(
      venues.filter((v) => v.addressLine2 === undefined || v.addressLine2 === null || v.addressLine2 === ''),
    );
    expect(blanks.length).toBeGreaterThan(0);
    const where = (exists: string) =>
      `venues?limit=0&depth=0&draft=true&sort=id&${q({ 'where[addressLine2][exists]': exists })}`;
    expect(ids(docsOf(await api.get(where('false'))))).toEqual([...blanks].sort());
    expect(await total(api, where('true'))).toBe(venues.length - blanks.length);
  });

  it('equals is exact and case-sensitive; like wants every word in any order; contains one substring', async () => {
    const api = await openSim();
    const s = docsOf(await api.get('series?limit=1&depth=0&sort=id'))[0] as JsonObject;
    const title = String(s.title);
    const words = title.split(' ');
    expect(words.length).toBeGreaterThan(1);
    const where = (op: string, v: string) => `series?limit=0&depth=0&${q({ [`where[title][${op}]`]: v })}`;
    expect(ids(docsOf(await api.get(where('equals', title))))).toContain(s.id);
    expect(await total(api, where('equals', title.toLowerCase()))).toBe(0);
    expect(await total(api, where('equals', title.slice(0, -1)))).toBe(0);
    const reversed = [...words].reverse().join(' ').toUpperCase();
    expect(ids(docsOf(await api.get(where('like', reversed))))).toContain(s.id);
    expect(ids(docsOf(await api.get(where('contains', title.slice(1, -1).toUpperCase()))))).toContain(s.id);
    expect(ids(docsOf(await api.get(where('contains', reversed))))).not.toContain(s.id);
  });

  it('parses date operands as instants: without milliseconds, with offsets, date-only', async () => {
    const api = await openSim();
    const all = docsOf(await api.get('event-instances?limit=0&depth=0'));
    const count = (ms: number) => all.filter((d) => Date.parse(String(d.updatedAt)) > ms).length;
    const cut = Date.parse('2025-09-01T00:00:00Z');
    for (const v of ['2025-09-01T00:00:00Z', '2025-09-01T02:00:00+02:00', '2025-09-01', '2025-09-01T00:00:00.000Z']) {
      expect(await total(api, `event-instances?limit=1&${q({ 'where[updatedAt][greater_than]': v })}`), v).toBe(
        count(cut),
      );
    }
  });

  it('filters through a relationship: where[event.title] on event instances', async () => {
    const api = await openSim();
    const ev = docsOf(await api.get('events?limit=1&depth=0&sort=id'))[0] as JsonObject;
    const byId = ids(
      docsOf(await api.get(`event-instances?limit=0&depth=0&${q({ 'where[event][equals]': String(ev.id) })}`)),
    );
    expect(byId.length).toBeGreaterThan(0);
    const exact = await api.get(
      `event-instances?limit=0&depth=0&${q({ 'where[event.title][equals]': String(ev.title) })}`,
    );
    expect(ids(docsOf(exact)).sort()).toEqual(expect.arrayContaining(byId.sort()));
    const like = await api.get(
      `event-instances?limit=0&depth=0&${q({ 'where[event.title][like]': String(ev.title).toLowerCase() })}`,
    );
    for (const d of docsOf(like)) {
      const e = (await api.get(`events/${d.event}?depth=0`)).json;
      expect(String(e.title).toLowerCase()).toContain(String(ev.title).toLowerCase().split(' ')[0]);
    }
    expect(ids(docsOf(like))).toEqual(expect.arrayContaining(byId));
  });
});

describe('errors in Payload shapes', () => {
  it('answers an unknown where field or operator with a QueryError naming the path', async () => {
    const api = await openSim();
    const field = await api.get(`series?${q({ 'where[nosuch][equals]': '1' })}`);
    expect(field.status).toBe(400);
    expect(field.json).toEqual({
      errors: [
        { name: 'QueryError', data: [{ path: 'nosuch' }], message: 'The following path cannot be queried: nosuch' },
      ],
    });
    const op = await api.get(`series?${q({ 'where[title][nope]': '1' })}`);
    expect(op.status).toBe(400);
    expect(op.json).toEqual({
      errors: [
        {
          name: 'QueryError',
          data: [{ path: 'title.nope' }],
          message: 'The following path cannot be queried: title.nope',
        },
      ],
    });
  });

  it('answers a create missing a required field with a ValidationError carrying label, message and path', async () => {
    const api = await openSim();
    const r = await api.req('POST', 'series', { description: 'no title' });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({
      errors: [
        {
          name: 'ValidationError',
          data: {
            collection: 'series',
            errors: [{ label: 'Title', message: 'This field is required.', path: 'title' }],
          },
          message: 'The following field is invalid: Title',
        },
      ],
    });
  });
});

describe('depth', () => {
  it('populates N levels of every relationship, the tenant included; depth=0 gives ids', async () => {
    const api = await openSim();
    const zero = docsOf(await api.get('event-instances?limit=1&depth=0&sort=id'))[0] as JsonObject;
    expect(typeof zero.event).toBe('string');
    expect(typeof zero.tenant).toBe('string');
    expect(Array.isArray(zero.series) && (zero.series as unknown[]).every((x) => typeof x === 'string')).toBe(true);
    const one = docsOf(await api.get('event-instances?limit=1&depth=1&sort=id'))[0] as JsonObject;
    expect((one.tenant as JsonObject).slug).toBe(api.tenant);
    const ev1 = one.event as JsonObject;
    expect(ev1.id).toBe(zero.event);
    expect(typeof ev1.tenant).toBe('string');
    expect(typeof ev1.venue === 'string' || ev1.venue === null).toBe(true);
    const two = docsOf(await api.get('event-instances?limit=1&depth=2&sort=id'))[0] as JsonObject;
    const ev2 = two.event as JsonObject;
    expect((ev2.tenant as JsonObject).slug).toBe(api.tenant);
    if (ev2.venue !== null) expect(typeof (ev2.venue as JsonObject).id).toBe('string');
    // Without depth, Payload's built-in default (2) applies.
    const dflt = docsOf(await api.get('event-instances?limit=1&sort=id'))[0] as JsonObject;
    expect(dflt).toEqual(two);
  });
});

describe('HTTP level', () => {
  it('answers HEAD on a list with the GET headers and no body', async () => {
    const api = await openSim();
    const get = await api.get('series?limit=3');
    const head = await api.req('HEAD', 'series?limit=3');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expect(head.headers.get('content-length')).toBe(get.headers.get('content-length'));
  });

  it('answers OPTIONS with 204 and Allow, without a key', async () => {
    const api = await openSim({ routes: 'documented' });
    const list = await fetch(`${api.base}/series`, { method: 'OPTIONS' });
    expect(list.status).toBe(204);
    expect(list.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'HEAD', 'OPTIONS', 'POST']);
    const item = await fetch(`${api.base}/redirects/abc`, { method: 'OPTIONS' });
    expect(item.headers.get('allow')?.split(', ').sort()).toEqual(['OPTIONS', 'PUT']);
  });
});

describe('route sets', () => {
  it('full: PATCH wherever the spec lists PUT, and DELETE by id, for every collection', async () => {
    const api = await openSim();
    const red = docsOf(await api.get('redirects?limit=1&depth=0'))[0] as JsonObject;
    const p = await api.req('PATCH', `redirects/${red.id}?depth=0`, { from: '/old-path' });
    expect(p.status).toBe(200);
    expect(p.json.from).toBe('/old-path');
    const s = docsOf(await api.get('series?limit=1&depth=0'))[0] as JsonObject;
    expect(((await api.req('DELETE', `series/${s.id}`)).json.doc as JsonObject).id).toBe(s.id);
    expect((await api.get(`series/${s.id}`)).status).toBe(404);
  });

  it('full: collection-level PATCH and DELETE with where answer {docs, errors, message}', async () => {
    const api = await openSim();
    const two = ids(docsOf(await api.get('series?limit=2&depth=0&sort=id')));
    const where = q({ 'where[id][in]': two.join(','), depth: '0' });
    const ok = await api.req('PATCH', `series?${where}`, { description: 'Bulk' });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ errors: [], message: 'Updated 2 Series successfully.' });
    expect(ids(docsOf(ok)).sort()).toEqual([...two].sort());
    // A value some records refuse (400, per-record errors): test/sim/sim-payload-parity.test.ts.
    expect((await api.req('PATCH', 'series', { description: 'x' })).status).toBe(400);
    const del = await api.req('DELETE', `series?${where}`);
    expect(del.json).toMatchObject({ errors: [], message: 'Deleted 2 Series successfully.' });
    for (const id of two) expect((await api.get(`series/${id}?draft=true`)).status).toBe(404);
  });

  it('full: the new write routes spend the write rate limit', async () => {
    const api = await openSim({ writeLimit: 2 });
    const red = docsOf(await api.get('redirects?limit=1&depth=0'))[0] as JsonObject;
    expect((await api.req('PATCH', `redirects/${red.id}`, {})).status).toBe(200);
    expect((await api.req('PATCH', `redirects?${q({ 'where[id][equals]': String(red.id) })}`, {})).status).toBe(200);
    expect((await api.req('DELETE', `redirects/${red.id}`)).status).toBe(429);
  });

  it('documented: exactly the spec list (PUT only, no DELETE by id, no collection-level writes)', async () => {
    const api = await openSim({ routes: 'documented' });
    expect((await api.get('event-instances?limit=1')).status).toBe(404);
    const patch = await api.req('PATCH', 'redirects/x', {});
    expect(patch.status).toBe(405);
    expect(patch.headers.get('allow')).toBe('PUT');
    expect((await api.req('DELETE', 'series/x')).status).toBe(404);
    expect((await api.req('PATCH', 'series', {})).status).toBe(405);
  });
});
