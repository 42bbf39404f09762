import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isJsonObject, type JsonObject } from '../../src/vocabulary/ids.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { idOf, writeHarness } from './write-harness.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

const pairs = (doc: Record<string, unknown> | JsonObject | null | undefined, field: 'attributes' | 'theme') => {
  const theme = doc?.theme;
  const arr =
    field === 'attributes'
      ? doc?.attributes
      : isJsonObject(theme as JsonObject)
        ? (theme as JsonObject).themeSettings
        : [];
  return Object.fromEntries(
    (Array.isArray(arr) ? arr : []).map((p) => [String((p as JsonObject).key), (p as JsonObject).value]),
  );
};

describe('every write route, end to end through Redis, the worker and the simulator', () => {
  it('creates series, posts, blogs, media and forms, and upserts each returned record into the mirror', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    await h.startWorker();
    // Published explicitly: a create without `_status` makes a draft (Payload), which a mirror without drafts skips.
    const bodies = {
      series: { title: 'Queued series', slug: 'queued-series', _status: 'published' },
      posts: { title: 'Queued post', slug: 'queued-post', _status: 'published' },
      blogs: { title: 'Queued blog', slug: 'queued-blog', _status: 'published' },
      media: { filename: 'queued.jpg', alt: 'Queued image' },
      forms: { title: 'Queued form', slug: 'queued-form' },
    } as const;
    const jobs: [keyof typeof bodies, string][] = [];
    for (const c of Object.keys(bodies) as (keyof typeof bodies)[]) {
      jobs.push([c, await h.queue.create(h.slug, c, bodies[c])]);
    }
    for (const [c, jobId] of jobs) {
      expect(await h.settled(jobId)).toBe('completed');
      const key = c === 'media' ? 'filename' : 'slug';
      const value = (bodies[c] as Record<string, string>)[key];
      const created = h.upstream(c).find((d) => d[key] === value);
      expect(created, `${c} created upstream`).toBeDefined();
      const id = c === 'media' ? String(value) : idOf(created);
      expect(h.mirrorDoc(c, id)?.[key], `${c} mirrored`).toBe(value);
      const row = h.logRow(jobId);
      expect(row).toMatchObject({
        op: 'create',
        collection: c,
        status: 'ok',
        method: 'POST',
        attempts: 1,
        result_id: id,
      });
      expect(row?.finished_at).toBeTruthy();
    }
    const posts = h.sim.controls.requestLog().filter((e) => e.method === 'POST');
    expect(posts).toHaveLength(5);
  });

  it('updates seasons, organizations, media, custom attributes and redirects with PUT, event instances with PATCH', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    await h.startWorker();
    const first = (c: Parameters<typeof h.upstream>[0]) => {
      const doc = h.upstream(c)[0];
      if (!doc) throw new Error(`no ${c}`);
      return doc;
    };
    const media = first('media');
    const cases = [
      { c: 'seasons', id: idOf(first('seasons')), body: { title: 'Renamed season' }, field: 'title', method: 'PUT' },
      {
        c: 'organizations',
        id: idOf(first('organizations')),
        body: { name: 'Renamed org' },
        field: 'name',
        method: 'PUT',
      },
      { c: 'media', id: String(media.id ?? media.filename), body: { alt: 'New alt' }, field: 'alt', method: 'PUT' },
      {
        c: 'custom-attributes',
        id: idOf(first('custom-attributes')),
        body: { PostsAttributes: [{ key: 'readingTime', label: 'Reading time', type: 'text', options: [] }] },
        field: 'PostsAttributes',
        method: 'PUT',
      },
      { c: 'redirects', id: idOf(first('redirects')), body: { from: '/moved-here' }, field: 'from', method: 'PUT' },
      {
        c: 'event-instances',
        id: idOf(first('event-instances')),
        body: { booking: { bookingLinkLabel: 'Book now' } },
        field: 'booking',
        method: 'PATCH',
      },
    ] as const;
    const jobIds: string[] = [];
    for (const k of cases) jobIds.push(await h.queue.update(h.slug, k.c, k.id, k.body as JsonObject));
    for (const [i, k] of cases.entries()) {
      const jobId = jobIds[i] as string;
      expect(await h.settled(jobId), `${k.c} settled`).toBe('completed');
      const up = h.upstream(k.c).find((d) => String(d.id ?? d.filename) === k.id);
      const want = (k.body as Record<string, unknown>)[k.field];
      expect(up?.[k.field], `${k.c} updated upstream`).toMatchObject(want as object);
      expect(h.mirrorDoc(k.c, k.id)?.[k.field], `${k.c} mirrored`).toMatchObject(want as object);
      expect(h.logRow(jobId)).toMatchObject({ op: 'update', status: 'ok', method: k.method, record_id: k.id });
      // Writes only: an update of a versioned record reads it first, and one with a pending draft sends four PUTs
      // (docs/writes.md, "An update of a versioned record").
      const sent = h.sim.controls
        .requestLog()
        .filter((e) => e.path.includes(`/${k.c}/${encodeURIComponent(k.id)}`) && e.method !== 'GET');
      expect(sent.length).toBeGreaterThan(0);
      expect(new Set(sent.map((e) => e.method))).toEqual(new Set([k.method]));
    }
  });

  it('deletes an event instance and marks its mirror row deleted', async () => {
    const h = await writeHarness({ redisUrl: redis.url, mirror: ['event-instances'] });
    await h.startWorker();
    const id = idOf(h.upstream('event-instances')[0]);
    expect(h.mirrorDoc('event-instances', id)?.__deletedAt).toBeNull();
    const jobId = await h.queue.delete(h.slug, 'event-instances', id);
    expect(await h.settled(jobId)).toBe('completed');
    expect(h.upstream('event-instances').some((d) => idOf(d) === id)).toBe(false);
    expect(h.mirrorDoc('event-instances', id)?.__deletedAt).toBeTruthy();
    expect(h.logRow(jobId)).toMatchObject({ op: 'delete', method: 'DELETE', status: 'ok', record_id: id });
  });

  it('has one typed method per write route, queuing the same job as the generic methods', async () => {
    const h = await writeHarness({ redisUrl: redis.url, mirror: ['event-instances'] });
    await h.startWorker();
    const [a, b] = h.upstream('event-instances').map(idOf);
    const patched = await h.queue.updateEventInstance(h.slug, a as string, { booking: { bookingLinkLabel: 'Typed' } });
    const deleted = await h.queue.deleteEventInstance(h.slug, b as string);
    const created = await h.queue.createSeries(h.slug, { title: 'Typed Series', slug: 'typed-series' });
    for (const id of [patched, deleted, created]) expect(await h.settled(id)).toBe('completed');
    expect(h.logRow(patched)).toMatchObject({
      op: 'update',
      method: 'PATCH',
      collection: 'event-instances',
      status: 'ok',
    });
    expect(h.logRow(deleted)).toMatchObject({ op: 'delete', method: 'DELETE', status: 'ok' });
    expect(h.logRow(created)).toMatchObject({ op: 'create', method: 'POST', collection: 'series', status: 'ok' });
    expect(h.upstream('series').some((d) => d.slug === 'typed-series')).toBe(true);
  });

  it('bulk-sets custom attributes on organizations and series and theme settings on blogs, then syncs the mirror', async () => {
    const h = await writeHarness({ redisUrl: redis.url, mirror: ['organizations', 'series', 'blogs', 'events'] });
    await h.startWorker();
    const org = idOf(h.upstream('organizations')[0]);
    // The mirror holds what published reads see: never-published records are not in it.
    const published = (c: 'series' | 'blogs') => h.sim.controls.docs(h.slug, c);
    const series = published('series').map(idOf);
    const orgJob = await h.queue.bulk(h.slug, 'organizations', { ids: [org], set: { region: 'north' } });
    const seriesJob = await h.queue.bulk(h.slug, 'series', { all: true, set: { featured: true } });
    const blogsJob = await h.queue.bulk(h.slug, 'blogs', { all: true, set: { heroStyle: 'split' } });
    for (const j of [orgJob, seriesJob, blogsJob]) expect(await h.settled(j)).toBe('completed');
    expect(
      pairs(
        h.upstream('organizations').find((d) => idOf(d) === org),
        'attributes',
      ).region,
    ).toBe('north');
    expect(pairs(h.mirrorDoc('organizations', org), 'attributes').region).toBe('north');
    for (const id of series) expect(pairs(h.mirrorDoc('series', id), 'attributes').featured).toBe(true);
    for (const b of published('blogs')) expect(pairs(h.mirrorDoc('blogs', idOf(b)), 'theme').heroStyle).toBe('split');
    expect(h.logRow(orgJob)).toMatchObject({ op: 'bulk', method: 'PATCH', status: 'ok' });
    const paths = h.sim.controls
      .requestLog()
      .filter((e) => e.method === 'PATCH')
      .map((e) => e.path.split('?')[0]);
    // One PATCH per bulk job; the worker runs the three jobs at once, so their order is not the enqueue order.
    expect(paths.map((p) => p?.split('/').slice(-2).join('/')).sort()).toEqual([
      'blogs/theme-settings',
      'organizations/custom-attributes',
      'series/custom-attributes',
    ]);
  });

  it('writes drafts with draft=true where the spec allows it', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    await h.startWorker();
    const jobId = await h.queue.create(h.slug, 'posts', { title: 'Draft post', slug: 'draft-post' }, { draft: true });
    expect(await h.settled(jobId)).toBe('completed');
    const post = h.sim.controls.requestLog().find((e) => e.method === 'POST');
    expect(post?.path).toContain('draft=true');
    expect(h.logRow(jobId)).toMatchObject({ draft: 1, status: 'ok' });
  });
});

describe('validation at enqueue: a clear error and nothing queued', () => {
  it.each([
    ['an unknown op', { op: 'upsert', collection: 'series', body: {} }, /unknown op "upsert"/],
    [
      'an op the collection has no route for',
      { op: 'create', collection: 'seasons', body: { title: 'x' } },
      /no create route for seasons/,
    ],
    ['an unknown collection', { op: 'create', collection: 'widgets', body: {} }, /unknown collection "widgets"/],
    ['an update without an id', { op: 'update', collection: 'organizations', body: { name: 'x' } }, /needs the id/],
    ['a delete without an id', { op: 'delete', collection: 'event-instances' }, /needs the id/],
    ['an id on a create', { op: 'create', collection: 'series', id: '1', body: { title: 'x' } }, /create takes no id/],
    ['a body that is not an object', { op: 'create', collection: 'series', body: [1] }, /body that is a JSON object/],
    [
      'blocks on a series create',
      { op: 'create', collection: 'series', body: { title: 'x', blocks: [] } },
      /field "blocks"/,
    ],
    ['theme on a post create', { op: 'create', collection: 'posts', body: { title: 'x', theme: {} } }, /field "theme"/],
    [
      'themeSettings on a blog create',
      { op: 'create', collection: 'blogs', body: { title: 'x', themeSettings: [] } },
      /field "themeSettings"/,
    ],
    [
      'theme.themeSettings on an organization PUT',
      { op: 'update', collection: 'organizations', id: '1', body: { name: 'x', theme: { themeSettings: [] } } },
      /field "theme"/,
    ],
    ['blocks on a season PUT', { op: 'put', collection: 'seasons', id: '1', body: { blocks: [] } }, /field "blocks"/],
    [
      'draft on a delete',
      { op: 'delete', collection: 'event-instances', id: '1', draft: true },
      /draft does not apply to a delete/,
    ],
    [
      'draft on a collection without versions',
      { op: 'update', collection: 'media', id: 'a.jpg', body: {}, draft: true },
      /versioned/,
    ],
    [
      'a bulk body without a target',
      { op: 'bulk', collection: 'series', body: { set: { featured: true } } },
      /exactly one of where, ids or all/,
    ],
    ['a bulk body with nothing to change', { op: 'bulk', collection: 'series', body: { all: true } }, /set or unset/],
    [
      'a theme setting the mirrored schema does not have',
      { op: 'bulk', collection: 'blogs', body: { all: true, set: { glitter: 'lots' } } },
      /theme setting "glitter" is not in the blogs theme-settings schema/,
    ],
    [
      'a theme-setting option the mirrored schema does not allow',
      { op: 'bulk', collection: 'blogs', body: { all: true, set: { heroStyle: 'neon' } } },
      /heroStyle: "neon" is not an allowed option/,
    ],
    [
      'unsetting a theme setting the schema does not have',
      { op: 'bulk', collection: 'blogs', body: { all: true, unset: ['glitter'] } },
      /"glitter" is not in/,
    ],
  ])('refuses %s', async (_name, req, message) => {
    const h = await writeHarness({ redisUrl: redis.url, mirror: ['events'] });
    await expect(h.queue.enqueue({ tenant: h.slug, ...req } as never)).rejects.toMatchObject({
      code: 'US_VALIDATION',
      message: expect.stringMatching(message),
    });
    const w = await h.startWorker();
    expect(await w.queue.count()).toBe(0);
    expect(await w.queue.getJobCounts()).toMatchObject({ completed: 0, failed: 0, waiting: 0, delayed: 0 });
  });

  it('refuses theme settings when no theme-settings schema is mirrored yet', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    await expect(h.queue.bulk(h.slug, 'blogs', { all: true, set: { heroStyle: 'split' } })).rejects.toThrow(
      /no theme-settings schema is mirrored/,
    );
  });

  it('accepts patch and put as update, and maps each to the route the spec has', async () => {
    const h = await writeHarness({ redisUrl: redis.url });
    const w = await h.startWorker();
    const ei = idOf(h.upstream('event-instances')[0]);
    const season = idOf(h.upstream('seasons')[0]);
    const a = await h.queue.enqueue({
      op: 'put',
      tenant: h.slug,
      collection: 'event-instances',
      id: ei,
      body: { ticketingSystemId: 'p1' },
    });
    const b = await h.queue.enqueue({
      op: 'patch',
      tenant: h.slug,
      collection: 'seasons',
      id: season,
      body: { title: 'Patched' },
    });
    expect(await h.settled(a)).toBe('completed');
    expect(await h.settled(b)).toBe('completed');
    expect((await w.queue.getJob(a))?.data).toMatchObject({ op: 'update', collection: 'event-instances', id: ei });
    const methods = h.sim.controls
      .requestLog()
      .filter((e) => e.method !== 'GET')
      .map((e) => `${e.method} ${e.path.split('/')[4]}`);
    expect(methods).toEqual(['PATCH event-instances', 'PUT seasons']);
  });
});
