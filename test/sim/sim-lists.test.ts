import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/vocabulary/ids.js';
import { type Api, docsOf, openSim } from './sim-helpers.js';

let api: Api;
beforeAll(async () => {
  api = await openSim({ maxLimit: 25 }, false);
});
afterAll(() => api.sim.close());

const ids = (docs: JsonObject[]): string[] => docs.map((d) => String(d.id));
const w = (o: Record<string, string>): string =>
  Object.entries(o)
    .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
    .join('&');

describe('list envelope', () => {
  it('defaults to limit 10, page 1', async () => {
    const r = await api.get('series');
    expect(r.json).toMatchObject({ limit: 10, page: 1, pagingCounter: 1, hasPrevPage: false, prevPage: null });
    expect(Object.keys(r.json).sort()).toEqual(
      [
        'docs',
        'hasNextPage',
        'hasPrevPage',
        'limit',
        'nextPage',
        'page',
        'pagingCounter',
        'prevPage',
        'totalDocs',
        'totalPages',
      ].sort(),
    );
  });

  it('does exact arithmetic on the first, middle, last and past-the-end pages', async () => {
    // Twelve series, one never published: draft=true lists count it, published lists do not.
    expect((await api.get('series?limit=5&draft=true')).json.totalDocs).toBe(12);
    const total = (await api.get('series?limit=5')).json.totalDocs as number;
    expect(total).toBe(11);
    expect((await api.get('series?limit=5&page=1')).json).toMatchObject({
      totalPages: 3,
      pagingCounter: 1,
      hasPrevPage: false,
      hasNextPage: true,
      prevPage: null,
      nextPage: 2,
    });
    const mid = await api.get('series?limit=5&page=2');
    expect(mid.json).toMatchObject({
      page: 2,
      pagingCounter: 6,
      prevPage: 1,
      nextPage: 3,
      hasPrevPage: true,
      hasNextPage: true,
    });
    expect(docsOf(mid)).toHaveLength(5);
    const last = await api.get('series?limit=5&page=3');
    expect(last.json).toMatchObject({ page: 3, pagingCounter: 11, nextPage: null, hasNextPage: false });
    expect(docsOf(last)).toHaveLength(1);
    // Past the end Payload counts nothing: totalDocs 0, totalPages 0, page 1, pagingCounter 0.
    const past = await api.get('series?limit=5&page=9');
    expect(past.json).toEqual({
      docs: [],
      totalDocs: 0,
      limit: 5,
      totalPages: 0,
      page: 1,
      pagingCounter: 0,
      hasPrevPage: false,
      hasNextPage: false,
      prevPage: null,
      nextPage: null,
    });
    const exact = await api.get('series?limit=4&page=3');
    expect(exact.json).toMatchObject({ totalPages: 3, hasNextPage: false });
  });

  it('clamps limit to the maximum and reports it; limit=0 and pagination=false return everything', async () => {
    const r = await api.get('event-instances?limit=5000');
    expect(r.json.limit).toBe(25);
    expect(docsOf(r)).toHaveLength(25);
    expect(r.json.totalPages).toBe(Math.ceil(36 / 25));
    const all = await api.get('event-instances?pagination=false&depth=0');
    expect(all.json).toMatchObject({ totalDocs: 36, limit: 0, totalPages: 1, page: 1, hasNextPage: false });
    expect(docsOf(all)).toHaveLength(36);
    const zero = await api.get('event-instances?limit=0&depth=0');
    expect(zero.json).toMatchObject({ totalDocs: 36, limit: 0, totalPages: 1, page: 1, pagingCounter: 1 });
    expect(docsOf(zero)).toHaveLength(36);
    // pagination=false with limit and page still applies both.
    const ordered = docsOf(await api.get('event-instances?limit=0&depth=0&sort=id')).map((d) => d.id);
    const second = await api.get('event-instances?pagination=false&limit=10&page=2&depth=0&sort=id');
    expect(docsOf(second).map((d) => d.id)).toEqual(ordered.slice(10, 20));
    expect(second.json).toMatchObject({ totalDocs: 10, limit: 10, totalPages: 1, hasNextPage: false });
  });

  it('reports no matches on page 1 as totalDocs 0, totalPages 0, pagingCounter 1 (as Payload counts page 1)', async () => {
    const r = await api.get(`series?${w({ 'where[slug][equals]': 'nope' })}`);
    expect(r.json).toMatchObject({
      docs: [],
      totalDocs: 0,
      totalPages: 0,
      page: 1,
      pagingCounter: 1,
      hasNextPage: false,
    });
  });

  it('refuses bad numbers with 400', async () => {
    for (const q of ['limit=-1', 'limit=abc', 'page=0', 'depth=-2']) {
      const r = await api.get(`series?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.json.errors).toBeDefined();
    }
  });
});

describe('sort', () => {
  it('sorts by updatedAt with ties broken by id ascending, asked for or not', async () => {
    for (const sort of ['updatedAt', '-updatedAt', 'updatedAt,id']) {
      const docs = docsOf(await api.get(`event-instances?pagination=false&depth=0&sort=${sort}`));
      let ties = 0;
      for (let i = 1; i < docs.length; i++) {
        const a = docs[i - 1] as JsonObject;
        const b = docs[i] as JsonObject;
        const c = Date.parse(a.updatedAt as string) - Date.parse(b.updatedAt as string);
        if (sort.startsWith('-')) expect(c).toBeGreaterThanOrEqual(0);
        else expect(c).toBeLessThanOrEqual(0);
        if (c === 0) {
          ties++;
          expect(String(a.id) < String(b.id)).toBe(true);
        }
      }
      expect(ties).toBeGreaterThan(0);
    }
  });

  it('sorts by several fields and by id descending', async () => {
    const docs = docsOf(await api.get('series?pagination=false&depth=0&sort=_status,-title'));
    for (let i = 1; i < docs.length; i++) {
      const a = docs[i - 1] as JsonObject;
      const b = docs[i] as JsonObject;
      expect(String(a._status) <= String(b._status)).toBe(true);
      if (a._status === b._status) expect(String(a.title) >= String(b.title)).toBe(true);
    }
    const byId = ids(docsOf(await api.get('series?pagination=false&sort=-id')));
    expect(byId).toEqual([...byId].sort().reverse());
  });

  it('refuses an unknown sort field with 400', async () => {
    expect((await api.get('series?sort=nope')).status).toBe(400);
  });

  it('pages through a tie-heavy order without losing or repeating records', async () => {
    const seen: string[] = [];
    for (let page = 1; page <= 8; page++)
      seen.push(...ids(docsOf(await api.get(`event-instances?limit=5&page=${page}&sort=updatedAt&depth=0`))));
    expect(new Set(seen).size).toBe(36);
  });
});

describe('where', () => {
  const all = async (): Promise<JsonObject[]> => docsOf(await api.get('event-instances?pagination=false&depth=0'));
  const q = async (o: Record<string, string>, c = 'event-instances'): Promise<JsonObject[]> => {
    const r = await api.get(`${c}?pagination=false&depth=0&${w(o)}`);
    expect(r.status, JSON.stringify(o)).toBe(200);
    return docsOf(r);
  };

  it('equals and not_equals, on plain and relationship fields', async () => {
    const docs = await all();
    const first = docs[0] as JsonObject;
    expect(ids(await q({ 'where[id][equals]': String(first.id) }))).toEqual([first.id]);
    const ev = String(first.event);
    expect((await q({ 'where[event][equals]': ev })).every((d) => d.event === ev)).toBe(true);
    const ne = await q({ 'where[event][not_equals]': ev });
    expect(ne.length + docs.filter((d) => d.event === ev).length).toBe(docs.length);
    const nested = await q({ 'where[ticketingA.availability][equals]': 'good' });
    expect(nested.every((d) => (d.ticketingA as JsonObject).availability === 'good')).toBe(true);
    const nestedObj = await q({ 'where[ticketingA][availability][equals]': 'good' });
    expect(ids(nestedObj)).toEqual(ids(nested));
  });

  it('in and not_in with comma lists and arrays; relationship arrays match any element', async () => {
    const docs = await all();
    const two = docs.slice(0, 2).map((d) => String(d.id));
    expect(ids(await q({ 'where[id][in]': two.join(',') })).sort()).toEqual([...two].sort());
    expect(ids(await q({ 'where[id][in][0]': two[0] as string, 'where[id][in][1]': two[1] as string })).sort()).toEqual(
      [...two].sort(),
    );
    expect(await q({ 'where[id][not_in]': two.join(',') })).toHaveLength(docs.length - 2);
    const withSeries = docs.find((d) => (d.series as string[]).length > 0) as JsonObject;
    const s = (withSeries.series as string[])[0] as string;
    const hits = await q({ 'where[series][in]': s });
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.every((d) => (d.series as string[]).includes(s))).toBe(true);
    expect(ids(await q({ 'where[series][equals]': s }))).toEqual(ids(hits));
  });

  it('compares dates as instants whatever the offset', async () => {
    const docs = docsOf(await api.get('event-instances?pagination=false&depth=0&sort=updatedAt'));
    const mid = docs[Math.floor(docs.length / 2)] as JsonObject;
    const at = Date.parse(mid.updatedAt as string);
    const plus5 = new Date(at + 5 * 3_600_000).toISOString().replace('Z', '+05:00');
    const minus = new Date(at - 3 * 3_600_000).toISOString().replace('Z', '-03:00');
    const n = (pred: (t: number) => boolean): number =>
      docs.filter((d) => pred(Date.parse(d.updatedAt as string))).length;
    expect(await q({ 'where[updatedAt][greater_than_equal]': plus5 })).toHaveLength(n((t) => t >= at));
    expect(await q({ 'where[updatedAt][greater_than]': minus })).toHaveLength(n((t) => t > at));
    expect(await q({ 'where[updatedAt][less_than]': plus5 })).toHaveLength(n((t) => t < at));
    expect(await q({ 'where[updatedAt][less_than_equal]': minus })).toHaveLength(n((t) => t <= at));
    expect(await q({ 'where[updatedAt][equals]': plus5 })).toHaveLength(n((t) => t === at));
  });

  it('exists, like (all words, any case) and contains (substring)', async () => {
    const series = docsOf(await api.get('series?pagination=false&depth=0'));
    const withImage = series.filter((d) => d.image !== null).length;
    expect(await q({ 'where[image][exists]': 'true' }, 'series')).toHaveLength(withImage);
    expect(await q({ 'where[image][exists]': 'false' }, 'series')).toHaveLength(series.length - withImage);
    const like = await q({ 'where[title][like]': 'jazz NIGHT' }, 'series');
    expect(like.length).toBeGreaterThan(0);
    expect(like.every((d) => /night/i.test(String(d.title)) && /jazz/i.test(String(d.title)))).toBe(true);
    const contains = await q({ 'where[title][contains]': 'ESSENTIAL' }, 'series');
    expect(contains.every((d) => /essential/i.test(String(d.title)))).toBe(true);
    expect(contains.length).toBeGreaterThan(0);
    expect(await q({ 'where[title][like]': 'jazz zebra' }, 'series')).toHaveLength(0);
  });

  it('nests and/or', async () => {
    const docs = await all();
    const [a, b] = docs as [JsonObject, JsonObject];
    const or = await q({ 'where[or][0][id][equals]': String(a.id), 'where[or][1][id][equals]': String(b.id) });
    expect(ids(or).sort()).toEqual([String(a.id), String(b.id)].sort());
    const and = await q({
      'where[and][0][or][0][id][equals]': String(a.id),
      'where[and][0][or][1][id][equals]': String(b.id),
      'where[and][1][id][not_equals]': String(b.id),
    });
    expect(ids(and)).toEqual([String(a.id)]);
  });

  it('refuses unknown fields and operators with 400 naming them', async () => {
    const r = await api.get(`series?${w({ 'where[nope][equals]': 'x' })}`);
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.json)).toContain('nope');
    expect((await api.get(`series?${w({ 'where[title][near]': 'x' })}`)).status).toBe(400);
  });
});

describe('select, depth, locale, draft', () => {
  it('select keeps the named fields and id; false excludes', async () => {
    const r = docsOf(await api.get('series?limit=2&select[title]=true&select[meta][title]=true'));
    for (const d of r) expect(Object.keys(d).sort()).toEqual(['id', 'meta', 'title']);
    expect(Object.keys((r[0] as JsonObject).meta as JsonObject)).toEqual(['title']);
    const ex = docsOf(await api.get('series?limit=1&select[blocks]=false&depth=0'))[0] as JsonObject;
    expect(ex).not.toHaveProperty('blocks');
    expect(ex).toHaveProperty('title');
  });

  it('depth 0 gives ids, depth 1 populates one level, depth 2 one further', async () => {
    const d0 = docsOf(await api.get('events?limit=3&depth=0'))[0] as JsonObject;
    expect(typeof d0.venue).toBe('string');
    expect((d0['event-instances'] as JsonObject).docs).toEqual(expect.arrayContaining([]));
    const ei0 = docsOf(await api.get('event-instances?limit=1&depth=0'))[0] as JsonObject;
    const ei1 = docsOf(await api.get('event-instances?limit=1&depth=1'))[0] as JsonObject;
    expect(typeof ei0.event).toBe('string');
    const ev1 = ei1.event as JsonObject;
    expect(ev1.id).toBe(ei0.event);
    expect(typeof ev1.venue).toBe('string');
    const ei2 = docsOf(await api.get('event-instances?limit=1&depth=2'))[0] as JsonObject;
    const ev2 = ei2.event as JsonObject;
    expect(typeof ev2.venue === 'object' || ev2.venue === null).toBe(true);
    const series1 = docsOf(await api.get('series?limit=12&depth=1'));
    const joined = series1.flatMap((s) => (s['event-instances'] as JsonObject).docs as JsonObject[]);
    expect(joined.length).toBeGreaterThan(0);
    expect(typeof joined[0]).toBe('object');
  });

  it('locale fr gives French with fallback to en; all gives per-locale objects', async () => {
    const en = docsOf(await api.get('events?pagination=false&depth=0&sort=id'));
    const fr = docsOf(await api.get('events?pagination=false&depth=0&sort=id&locale=fr'));
    const all = docsOf(await api.get('events?pagination=false&depth=0&sort=id&locale=all'));
    const none = docsOf(await api.get('events?pagination=false&depth=0&sort=id&locale=fr&fallbackLocale=none'));
    let translated = 0;
    let fellBack = 0;
    en.forEach((e, i) => {
      const a = all[i]?.title as JsonObject;
      expect(a.en).toBe(e.title);
      if (a.fr) {
        translated++;
        expect(fr[i]?.title).toBe(a.fr);
      } else {
        fellBack++;
        expect(fr[i]?.title).toBe(e.title);
        expect(none[i]?.title).toBeNull();
      }
    });
    expect(translated).toBeGreaterThan(0);
    expect(fellBack).toBeGreaterThan(0);
  });

  it('draft=true reads newer drafts; published reads never show them', async () => {
    const pub = docsOf(await api.get('series?pagination=false&depth=0&sort=id'));
    const dr = docsOf(await api.get('series?pagination=false&depth=0&sort=id&draft=true'));
    const pubTitle = new Map(pub.map((d) => [d.id, d.title]));
    // Records with a newer draft (never-published ones are not in the published list at all).
    const withDraft = dr.filter((d) => pubTitle.has(d.id) && d.title !== pubTitle.get(d.id));
    expect(withDraft.length).toBeGreaterThan(0);
    for (const d of withDraft) {
      expect(d._status).toBe('draft');
      expect(String(d.title)).toContain('(draft');
    }
    expect(pub.some((d) => String(d.title).includes('(draft'))).toBe(false);
    const id = String(withDraft[0]?.id);
    expect((await api.get(`series/${id}?draft=true`)).json.title).toBe(withDraft[0]?.title);
    expect((await api.get(`series/${id}`)).json.title).not.toBe(withDraft[0]?.title);
  });
});

describe('joins and populate', () => {
  it('limits joined docs with joins[field][limit], reports hasNextPage, and omits joins with joins=false', async () => {
    const seasons = docsOf(await api.get('seasons?pagination=false&depth=0&sort=id'));
    const events = api.sim.controls.docs(api.tenant, 'events');
    const s = seasons.find((x) => events.filter((e) => e.season === x.id).length >= 2) as JsonObject;
    const n = events.filter((e) => e.season === s.id).length;
    expect((s.events as JsonObject).docs).toHaveLength(Math.min(n, 10));
    const one = (await api.get(`seasons/${s.id}?depth=0&joins[events][limit]=1`)).json;
    expect(one.events).toEqual({ docs: [expect.any(String)], hasNextPage: true });
    const off = (await api.get(`seasons/${s.id}?depth=0&joins=false`)).json;
    expect(off).not.toHaveProperty('events');
  });

  it('selects inside populated documents with populate[collection][field]', async () => {
    const ei = docsOf(await api.get('event-instances?limit=2&depth=1&populate[events][title]=true'));
    for (const d of ei) expect(Object.keys(d.event as JsonObject).sort()).toEqual(['id', 'title']);
  });
});

describe('determinism', () => {
  it('gives byte-identical lists for the same seed and different data for another seed', async () => {
    const a = await openSim({ seed: 7 });
    const b = await openSim({ seed: 7 });
    const c = await openSim({ seed: 8 });
    const strip = (s: string, url: string): string => s.split(url).join('ORIGIN');
    for (const p of ['series?limit=50&depth=2', 'media?limit=50', 'event-instances?limit=100&sort=updatedAt']) {
      expect(strip((await a.get(p)).text, a.sim.url)).toBe(strip((await b.get(p)).text, b.sim.url));
    }
    expect(a.sim.tenants).toEqual(b.sim.tenants);
    expect(c.sim.tenants[0]?.key).not.toBe(a.sim.tenants[0]?.key);
    expect((await c.get('series?depth=0')).text).not.toBe((await a.get('series?depth=0')).text);
  });

  it('uses key overrides', async () => {
    const probe = await openSim({ seed: 3, tenants: 1 });
    const slug = probe.tenant;
    const o = await openSim({ seed: 3, tenants: 1, keys: { [slug]: 'my_own_key_0123456789abcdef' } });
    expect(o.key).toBe('my_own_key_0123456789abcdef');
    expect((await o.get('series')).status).toBe(200);
  });
});
