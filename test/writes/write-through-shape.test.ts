import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/vocabulary/ids.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { idOf, writeHarness } from './write-harness.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

describe('write-through stores what a sync would store', () => {
  it('keeps relationships of a patched event instance as ids, and the next --full updates nothing', async () => {
    const h = await writeHarness({ redisUrl: redis.url, mirror: ['event-instances'] });
    const id = idOf(h.upstream('event-instances')[0]);
    await h.startWorker();
    const jobId = await h.queue.update(h.slug, 'event-instances', id, { booking: { bookingLinkLabel: 'Depth probe' } });
    expect(await h.settled(jobId)).toBe('completed');
    const [row] = h.query<{ event: string; venue: string; label: string }>(
      "SELECT json_type(doc, '$.event') AS event, json_type(doc, '$.venue') AS venue, json_extract(doc, '$.booking.bookingLinkLabel') AS label FROM event_instances WHERE id = ?",
      id,
    );
    expect(row?.label).toBe('Depth probe');
    expect(row?.event).not.toBe('object');
    expect(row?.venue).not.toBe('object');
    expect(h.sim.controls.requestLog().find((e) => e.method === 'PATCH')?.path).toContain('depth=0');
    const report = await h.fullSync('event-instances');
    expect(report).toMatchObject({ updated: 0, deleted: 0 });
  });

  it('creates a series that the next --full leaves unchanged', async () => {
    const h = await writeHarness({ redisUrl: redis.url, mirror: ['series'] });
    await h.startWorker();
    const jobId = await h.queue.create(h.slug, 'series', { title: 'Shaped', slug: 'shaped', _status: 'published' });
    expect(await h.settled(jobId)).toBe('completed');
    const made = h.upstream('series').find((d) => d.slug === 'shaped');
    expect(h.mirrorDoc('series', idOf(made))?.slug).toBe('shaped');
    expect(await h.fullSync('series')).toMatchObject({ inserted: 0, updated: 0, deleted: 0 });
  });

  it('stores a custom attribute answered without depth (the PUT takes none) as a sync would', async () => {
    const h = await writeHarness({ redisUrl: redis.url, mirror: ['custom-attributes'] });
    const ca = h.upstream('custom-attributes')[0];
    await h.startWorker();
    const jobId = await h.queue.update(h.slug, 'custom-attributes', idOf(ca), {
      EventsAttributes: (ca?.EventsAttributes ?? []) as JsonObject[],
    });
    expect(await h.settled(jobId)).toBe('completed');
    expect(h.sim.controls.requestLog().find((e) => e.method === 'PUT')?.path).not.toContain('depth');
    expect(await h.fullSync('custom-attributes')).toMatchObject({ updated: 0, deleted: 0 });
  });
});

describe('drafts stay drafts', () => {
  it('does not put a created draft in the published table when drafts are not mirrored', async () => {
    const h = await writeHarness({ redisUrl: redis.url, mirror: ['series'] });
    await h.startWorker();
    const jobId = await h.queue.create(h.slug, 'series', {
      title: 'Still a draft',
      slug: 'still-draft',
      _status: 'draft',
    });
    expect(await h.settled(jobId)).toBe('completed');
    const made = h.upstream('series').find((d) => d.slug === 'still-draft');
    expect(made?._status).toBe('draft');
    expect(h.mirrorDoc('series', idOf(made))).toBeNull();
    expect(h.query('SELECT id FROM doc_variants WHERE id = ?', idOf(made))).toEqual([]);
    expect(h.logRow(jobId)).toMatchObject({ status: 'ok', result_id: idOf(made) });
  });

  it('files a created draft as the draft variant when drafts are mirrored', async () => {
    const h = await writeHarness({ redisUrl: redis.url, mirror: ['series'], drafts: true });
    await h.startWorker();
    const jobId = await h.queue.create(h.slug, 'series', { title: 'Draft kept', slug: 'draft-kept', _status: 'draft' });
    expect(await h.settled(jobId)).toBe('completed');
    const made = h.upstream('series').find((d) => d.slug === 'draft-kept');
    expect(h.mirrorDoc('series', idOf(made))).toBeNull();
    const variants = h.query<{ variant: string; deleted_at: string | null }>(
      'SELECT variant, deleted_at FROM doc_variants WHERE collection = ? AND id = ?',
      'series',
      idOf(made),
    );
    expect(variants).toEqual([{ variant: 'draft', deleted_at: null }]);
  });

  it('files a create sent with _status published in the published table', async () => {
    const h = await writeHarness({ redisUrl: redis.url, mirror: ['series'] });
    await h.startWorker();
    const jobId = await h.queue.create(h.slug, 'series', { title: 'Live', slug: 'live', _status: 'published' });
    expect(await h.settled(jobId)).toBe('completed');
    const made = h.upstream('series').find((d) => d.slug === 'live');
    expect(h.mirrorDoc('series', idOf(made))).toMatchObject({ slug: 'live', _status: 'published', __deletedAt: null });
  });
});

describe('idsForRelationships', () => {
  it('turns populated records, arrays of them and joined docs into ids, and leaves other values alone', async () => {
    const { idsForRelationships } = await import('../../src/writes/apply-write.js');
    const populated = { id: 't1', name: 'Tenant', updatedAt: '2026-01-01T00:00:00.000Z' };
    const doc = {
      id: 'ca1',
      label: 'Label',
      tenant: populated,
      series: [populated, 's2'],
      options: [{ label: 'A', value: 'a' }],
      events: { docs: [populated], hasNextPage: false },
      meta: { title: 'x' },
      updatedAt: '2026-01-02T00:00:00.000Z',
    };
    expect(idsForRelationships(doc)).toEqual({
      id: 'ca1',
      label: 'Label',
      tenant: 't1',
      series: ['t1', 's2'],
      options: [{ label: 'A', value: 'a' }],
      events: { docs: ['t1'], hasNextPage: false },
      meta: { title: 'x' },
      updatedAt: '2026-01-02T00:00:00.000Z',
    });
  });
});
