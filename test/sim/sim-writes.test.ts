import { describe, expect, it } from 'vitest';
import { MAX_BODY_DEPTH } from '../../src/sim/sim-read-body.js';
import type { JsonObject } from '../../src/vocabulary/ids.js';
import { type Api, docsOf, openSim } from './sim-helpers.js';

const first = async (api: Api, c: string, q = ''): Promise<JsonObject> =>
  docsOf(await api.get(`${c}?limit=1&depth=0&sort=id${q}`))[0] as JsonObject;

describe('creates', () => {
  it('creates series, posts, blogs, media and forms with ids and timestamps', async () => {
    const api = await openSim();
    const bodies: [string, JsonObject][] = [
      ['series', { title: 'Winter Voices', slug: 'winter-voices' }],
      ['posts', { title: 'Notes from the pit', blog: String((await first(api, 'blogs')).id) }],
      ['blogs', { title: 'Field notes' }],
      ['media', { filename: 'poster-new.png', alt: 'A poster', width: 800, height: 600 }],
      ['forms', { title: 'Access needs', slug: 'access-needs-x' }],
    ];
    for (const [c, body] of bodies) {
      const r = await api.req('POST', `${c}?depth=0`, body);
      expect(r.status, `${c} ${r.text}`).toBe(201);
      expect(r.json.createdAt).toBe(r.json.updatedAt);
      if (c === 'media') {
        expect(r.json.id).toBeUndefined();
        expect(r.json.url).toBe(`${api.sim.url}/media/${api.tenant}/poster-new.png`);
        expect((await fetch(String(r.json.url))).status).toBe(200);
      } else {
        expect(r.json.id).toMatch(/^[0-9a-f]{24}$/);
        // No `_status` in the body: Payload creates a draft, found by draft reads only (forms are not versioned).
        const versioned = c !== 'forms';
        if (versioned) expect(r.json._status).toBe('draft');
        expect((await api.get(`${c}/${r.json.id}?depth=0&draft=true`)).json.title).toBe(body.title);
        expect((await api.get(`${c}/${r.json.id}?depth=0`)).status).toBe(versioned ? 404 : 200);
      }
    }
    const blog = await api.req('POST', 'blogs?depth=0', { title: 'Field notes' });
    expect(blog.json.slug).toBe('field-notes-2');
  });

  it('refuses forbidden fields, duplicate slugs, missing required fields and bad types with 400, storing nothing', async () => {
    const api = await openSim();
    const before = (await api.get('series?limit=1')).json.totalDocs;
    const existing = String((await first(api, 'series')).slug);
    const cases: [JsonObject | string, string][] = [
      [{ title: 'x', blocks: [] }, 'blocks'],
      [{ title: 'x', theme: { themeSettings: [] } }, 'theme'],
      [{ title: 'x', themeSettings: [] }, 'themeSettings'],
      [{ title: 'x', slug: existing }, 'slug'],
      [{ slug: 'no-title' }, 'title'],
      [{ title: 42 }, 'title'],
      [{ title: 'x', startDate: 'next tuesday' }, 'startDate'],
      [{ title: 'x', image: 'no-such-file.png' }, 'image'],
      ['[1,2]', 'JSON object'],
      ['{"title": ', 'JSON'],
    ];
    for (const [body, named] of cases) {
      const r = await api.req('POST', 'series', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(r.json.errors), JSON.stringify(body)).toContain(named);
    }
    expect((await api.get('series?limit=1')).json.totalDocs).toBe(before);
  });

  it('creates a draft-only record with draft=true', async () => {
    const api = await openSim();
    const r = await api.req('POST', 'series?draft=true&depth=0', { title: 'Sketches' });
    expect(r.json._status).toBe('draft');
  });
});

describe('updates and deletes', () => {
  it('PUT is partial, moves updatedAt strictly forward, and refuses forbidden fields on seasons and organizations', async () => {
    const api = await openSim();
    const org = await first(api, 'organizations');
    const r = await api.req('PUT', `organizations/${org.id}?depth=0`, { description: 'New words' });
    expect(r.status).toBe(200);
    expect(r.json.description).toBe('New words');
    expect(r.json.name).toBe(org.name);
    expect(r.json.slug).toBe(org.slug);
    expect(Date.parse(String(r.json.updatedAt))).toBeGreaterThan(Date.parse(String(org.updatedAt)));
    const again = await api.req('PUT', `organizations/${org.id}?depth=0`, { description: 'Newer words' });
    expect(Date.parse(String(again.json.updatedAt))).toBeGreaterThan(Date.parse(String(r.json.updatedAt)));
    for (const c of ['seasons', 'organizations']) {
      const d = await first(api, c);
      const bad = await api.req('PUT', `${c}/${d.id}`, { blocks: [], description: 'x' });
      expect(bad.status).toBe(400);
      expect((await api.get(`${c}/${d.id}?depth=0`)).json.description).toBe(d.description);
    }
  });

  it('PATCH of an event instance deep-merges groups; DELETE returns {doc, message}, then 404', async () => {
    const api = await openSim();
    const ei = await first(api, 'event-instances');
    const r = await api.req('PATCH', `event-instances/${ei.id}?depth=0`, { booking: { bookingLinkLabel: 'Tonight' } });
    expect(r.json.booking).toEqual({ ...(ei.booking as JsonObject), bookingLinkLabel: 'Tonight' });
    expect(r.json.event).toBe(ei.event);
    const del = await api.req('DELETE', `event-instances/${ei.id}`);
    expect(del.status).toBe(200);
    expect(del.json).toEqual({ doc: expect.objectContaining({ id: ei.id }), message: 'Deleted successfully.' });
    expect((await api.get(`event-instances/${ei.id}`)).status).toBe(404);
    expect((await api.req('DELETE', `event-instances/${ei.id}`)).status).toBe(404);
    expect((await api.req('PATCH', 'event-instances/000000000000000000000000', {})).status).toBe(404);
  });

  it('PUT media by filename, custom-attributes and redirects', async () => {
    const api = await openSim();
    const m = await first(api, 'media', '&sort=filename');
    const r = await api.req('PUT', `media/${m.filename}`, { alt: 'Changed' });
    expect(r.json.alt).toBe('Changed');
    expect((await api.req('PUT', `media/${m.filename}`, { filename: 'other.png' })).status).toBe(400);
    const ca = await first(api, 'custom-attributes');
    const cr = await api.req('PUT', `custom-attributes/${ca.id}`, {
      SeriesAttributes: [{ key: 'premiere', label: 'Premiere', type: 'boolean', options: [] }],
    });
    expect(cr.status).toBe(200);
    expect((cr.json.SeriesAttributes as JsonObject[])[0]?.key).toBe('premiere');
    const rd = await first(api, 'redirects');
    const rr = await api.req('PUT', `redirects/${rd.id}`, { to: { url: '/new' } });
    expect((rr.json.to as JsonObject).url).toBe('/new');
    expect((rr.json.to as JsonObject).type).toBe((rd.to as JsonObject).type);
  });

  it('draft=true writes only the draft; a published write supersedes it', async () => {
    const api = await openSim();
    const s = await first(api, 'seasons');
    const w = await api.req('PUT', `seasons/${s.id}?draft=true&depth=0`, { description: 'Draft words' });
    expect(w.json._status).toBe('draft');
    expect((await api.get(`seasons/${s.id}?depth=0`)).json.description).toBe(s.description);
    expect((await api.get(`seasons/${s.id}?depth=0&draft=true`)).json.description).toBe('Draft words');
    await api.req('PUT', `seasons/${s.id}?depth=0`, { description: 'Live words' });
    expect((await api.get(`seasons/${s.id}?depth=0&draft=true`)).json.description).toBe('Live words');
  });

  it('writes a locale with locale=fr, leaving en alone', async () => {
    const api = await openSim();
    const s = await first(api, 'seasons');
    await api.req('PUT', `seasons/${s.id}?locale=fr`, { description: 'Mots nouveaux' });
    expect((await api.get(`seasons/${s.id}?depth=0&locale=fr`)).json.description).toBe('Mots nouveaux');
    expect((await api.get(`seasons/${s.id}?depth=0`)).json.description).toBe(s.description);
  });
});

describe('bulk', () => {
  it('sets and unsets configured custom attributes by ids, with per-record failures', async () => {
    const api = await openSim();
    const [a0, b0] = docsOf(await api.get('series?limit=2&depth=0&sort=id')) as [JsonObject, JsonObject];
    // Start from records without these attributes, whatever the seed gave them.
    await api.req('PATCH', 'series/custom-attributes', { ids: [a0.id, b0.id], unset: ['accessibility', 'sponsor'] });
    const a = (await api.get(`series/${a0.id}?depth=0`)).json;
    const b = (await api.get(`series/${b0.id}?depth=0`)).json;
    const r = await api.req('PATCH', 'series/custom-attributes', {
      ids: [a.id, b.id, 'ffffffffffffffffffffffff'],
      set: { accessibility: 'relaxed', sponsor: 'Acme' },
    });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ dryRun: false, versionTarget: 'published', matched: 2, updated: 2, failed: 1 });
    for (const k of [
      'wouldUpdate',
      'unchanged',
      'draftSynced',
      'draftWouldSync',
      'draftSyncSkipped',
      'draftSyncFailed',
    ])
      expect(typeof r.json[k]).toBe('number');
    const results = r.json.results as JsonObject[];
    expect(results[0]).toMatchObject({ id: a.id, status: 'updated', set: ['accessibility', 'sponsor'], unset: [] });
    expect(results[0]?.draftSync).toHaveProperty('status');
    expect(results[2]).toMatchObject({
      id: 'ffffffffffffffffffffffff',
      status: 'failed',
      error: { message: 'Not Found', status: 404 },
    });
    const after = (await api.get(`series/${a.id}?depth=0`)).json;
    expect(after.attributes).toEqual(
      expect.arrayContaining([
        { key: 'accessibility', value: 'relaxed' },
        { key: 'sponsor', value: 'Acme' },
      ]),
    );
    expect(Date.parse(String(after.updatedAt))).toBeGreaterThan(Date.parse(String(a.updatedAt)));
    const again = await api.req('PATCH', 'series/custom-attributes', {
      ids: [a.id],
      set: { sponsor: 'Acme' },
      unset: ['accessibility'],
    });
    expect((again.json.results as JsonObject[])[0]).toMatchObject({
      status: 'updated',
      set: [],
      unset: ['accessibility'],
    });
    const same = await api.req('PATCH', 'series/custom-attributes', { ids: [a.id], set: { sponsor: 'Acme' } });
    expect(same.json).toMatchObject({ unchanged: 1, updated: 0 });
  });

  it('dryRun reports without applying; where and all select targets', async () => {
    const api = await openSim();
    const before = api.sim.controls.docs(api.tenant, 'organizations');
    const dry = await api.req('PATCH', 'organizations/custom-attributes', {
      all: true,
      set: { partner: true },
      dryRun: true,
    });
    expect(dry.json).toMatchObject({ dryRun: true, matched: before.length, updated: 0, wouldUpdate: before.length });
    expect((dry.json.results as JsonObject[])[0]?.status).toBe('wouldUpdate');
    expect(api.sim.controls.docs(api.tenant, 'organizations')).toEqual(before);
    const target = before[0] as JsonObject;
    const wr = await api.req('PATCH', 'organizations/custom-attributes', {
      where: { slug: { equals: target.slug } },
      set: { region: 'north' },
    });
    expect(wr.json.matched).toBe(1);
  });

  it('refuses unknown keys, bad values and bad bodies with 400 and applies nothing', async () => {
    const api = await openSim();
    const before = api.sim.controls.docs(api.tenant, 'series');
    const ids = [String(before[0]?.id)];
    const bad: [JsonObject, string][] = [
      [{ ids, set: { nope: 'x' } }, 'set.nope'],
      [{ ids, set: { accessibility: 'loud' } }, 'set.accessibility'],
      [{ ids, set: { featured: 'yes' } }, 'set.featured'],
      [{ set: { sponsor: 'x' } }, 'where|ids|all'],
      [{ ids, all: true, set: { sponsor: 'x' } }, 'where|ids|all'],
      [{ ids }, 'set'],
      [{ ids, unset: ['nope'] }, 'unset.nope'],
      [{ ids, set: { sponsor: 'x' }, dryRun: 'yes' }, 'dryRun'],
    ];
    for (const [body, named] of bad) {
      const r = await api.req('PATCH', 'series/custom-attributes', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(r.json), JSON.stringify(body)).toContain(named);
    }
    expect(api.sim.controls.docs(api.tenant, 'series')).toEqual(before);
  });

  it('bulk theme settings follow the schema; draft=true writes only drafts; published writes sync drafts', async () => {
    const api = await openSim();
    const blogs = docsOf(await api.get('blogs?pagination=false&depth=0&sort=id'));
    const drafts = docsOf(await api.get('blogs?pagination=false&depth=0&sort=id&draft=true'));
    const draftTitle = new Map(drafts.map((d) => [d.id, d.title]));
    const withDraft = blogs.find((b) => draftTitle.get(b.id) !== b.title);
    const ids = blogs.map((b) => String(b.id));
    const r = await api.req('PATCH', 'blogs/theme-settings', { ids, set: { heroStyle: 'split' } });
    expect(r.json.updated).toBe(blogs.length);
    const b0 = (await api.get(`blogs/${ids[0]}?depth=0`)).json;
    expect((b0.theme as JsonObject).themeSettings).toEqual([{ key: 'heroStyle', value: 'split' }]);
    if (withDraft) {
      const res = (r.json.results as JsonObject[]).find((x) => x.id === withDraft.id);
      expect(res?.draftSync).toMatchObject({ status: 'synced', set: ['heroStyle'] });
      const d = (await api.get(`blogs/${withDraft.id}?depth=0&draft=true`)).json;
      expect((d.theme as JsonObject).themeSettings).toEqual([{ key: 'heroStyle', value: 'split' }]);
      expect(r.json.draftSynced).toBeGreaterThan(0);
    }
    expect((await api.req('PATCH', 'blogs/theme-settings', { ids, set: { heroStyle: 'neon' } })).status).toBe(400);
    const dr = await api.req('PATCH', 'blogs/theme-settings?draft=true', {
      ids: [ids[0]],
      set: { accentColor: 'gold' },
    });
    expect(dr.json).toMatchObject({ versionTarget: 'draft', updated: 1 });
    expect(((await api.get(`blogs/${ids[0]}?depth=0`)).json.theme as JsonObject).themeSettings).toHaveLength(1);
    expect(((await api.get(`blogs/${ids[0]}?depth=0&draft=true`)).json.theme as JsonObject).themeSettings).toHaveLength(
      2,
    );
  });
});

describe('bodies nested past the depth limit', () => {
  const nested = (levels: number, pre: string, post: string) =>
    `${pre}${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}${post}`;

  it('are refused with ValidationError naming the field, and every list still answers 200', async () => {
    const api = await openSim();
    const ei = String((await first(api, 'event-instances')).id);
    for (const levels of [MAX_BODY_DEPTH, 2_000, 20_000]) {
      const patch = await api.req('PATCH', `event-instances/${ei}`, nested(levels, '{"booking":', '}'));
      const post = await api.req(
        'POST',
        'series',
        nested(levels, `{"title":"Deep","slug":"deep-${levels}","meta":`, '}'),
      );
      for (const [r, field] of [
        [patch, 'booking'],
        [post, 'meta'],
      ] as const) {
        expect(r.status, `${levels} ${field}`).toBe(400);
        expect(r.json.errors).toEqual([
          expect.objectContaining({
            name: 'ValidationError',
            data: expect.objectContaining({ errors: [expect.objectContaining({ path: field })] }),
          }),
        ]);
      }
    }
    for (const q of [
      'event-instances?limit=100',
      'event-instances?locale=all&limit=100',
      'series?draft=true&limit=100',
    ])
      expect((await api.get(q)).status, q).toBe(200);
  });

  it('are taken up to the limit', async () => {
    const api = await openSim();
    const ei = String((await first(api, 'event-instances')).id);
    // The body is level 1 and booking level 2: this body is exactly MAX_BODY_DEPTH deep.
    const r = await api.req('PATCH', `event-instances/${ei}`, nested(MAX_BODY_DEPTH - 2, '{"booking":', '}'));
    expect(r.status, r.text).toBe(200);
    expect((await api.get('event-instances?limit=100')).status).toBe(200);
  });
});
