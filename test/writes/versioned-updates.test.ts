import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Logger } from '../../src/log.js';
import type { PartnersClient } from '../../src/partners/partners-client.js';
import type { CollectionSlug } from '../../src/vocabulary/collections.js';
import { recordId } from '../../src/vocabulary/ids.js';
import { applyWrite } from '../../src/writes/apply-write.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { silentLog } from '../helpers/sync-harness.js';
import { idOf, type WriteHarness, writeHarness } from './write-harness.js';

// Issue 29: an update that is not a draft write never unpublishes a record nor publishes an editor's pending draft,
// on a spec-faithful upstream and on one that applies updates onto the latest version as Payload 3 does.

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

const FIELD = { seasons: 'title', organizations: 'name' } as const;
type Versioned = keyof typeof FIELD;
const call = { signal: AbortSignal.timeout(10_000) };

/** A published record without a pending draft, one with a pending draft (made here) and a never-published one. */
async function threeRecords(h: WriteHarness, c: Versioned) {
  const published = new Set(h.sim.controls.docs(h.slug, c).map(idOf));
  const all = h.upstream(c);
  const live = all.filter((d) => published.has(idOf(d)) && d._status === 'published').map(idOf);
  const draftOnly = all.find((d) => !published.has(idOf(d)));
  const [plain, pending] = live;
  if (!plain || !pending || !draftOnly) throw new Error(`${c}: not enough records`);
  const draftEdit = `Pending editor edit of ${c}`;
  await h.client.update(c, recordId(pending), 'PUT', { [FIELD[c]]: draftEdit }, { draft: true, depth: 0 }, call);
  return { plain, pending, draftOnly: idOf(draftOnly), draftEdit };
}

const read = (h: WriteHarness, c: CollectionSlug, id: string, draft: boolean) =>
  (draft ? h.upstream(c) : h.sim.controls.docs(h.slug, c)).find((d) => idOf(d) === id);

describe.each([
  ['a spec-faithful upstream', false],
  ['a Payload-like upstream (updates onto the latest version)', true],
])('a queued update of a versioned record, on %s', (_name, updatesOntoLatest) => {
  it.each(['seasons', 'organizations'] as const)(
    'leaves a published %s published with the new value, a pending draft its own edits, a draft-only record a draft',
    async (c) => {
      const h = await writeHarness({
        redisUrl: redis.url,
        sim: { records: 12, updatesOntoLatest },
        mirror: [c],
        drafts: true,
      });
      const { plain, pending, draftOnly, draftEdit } = await threeRecords(h, c);
      const before = read(h, c, pending, false)?.[FIELD[c]];
      await h.startWorker();
      const fix = `https://fixed.example/${c}`;
      const body = (id: string) => ({ url: `${fix}/${id}` });
      const jobs = [plain, pending, draftOnly].map((id) => ({ id }));
      const ids: string[] = [];
      for (const j of jobs) ids.push(await h.queue.update(h.slug, c, j.id, body(j.id)));
      for (const [i, j] of jobs.entries()) {
        expect(await h.settled(ids[i] as string), `${j.id} settled`).toBe('completed');
        expect(h.logRow(ids[i] as string)).toMatchObject({ status: 'ok', note: null });
      }
      for (const id of [plain, pending]) {
        const pub = read(h, c, id, false);
        expect(pub, `${id} still published`).toMatchObject({ _status: 'published', url: `${fix}/${id}` });
        const row = h.mirrorDoc(c, id);
        expect(row).toMatchObject({ _status: 'published', url: `${fix}/${id}`, __deletedAt: null });
      }
      // The published version did not take the editor's draft edit; the draft kept it and got the fix too.
      expect(read(h, c, pending, false)?.[FIELD[c]]).toEqual(before);
      expect(h.mirrorDoc(c, pending)?.[FIELD[c]]).toEqual(before);
      expect(read(h, c, pending, true)).toMatchObject({
        _status: 'draft',
        [FIELD[c]]: draftEdit,
        url: `${fix}/${pending}`,
      });
      // The never-published record stays a draft, with the fix.
      expect(read(h, c, draftOnly, false)).toBeUndefined();
      expect(read(h, c, draftOnly, true)).toMatchObject({ _status: 'draft', url: `${fix}/${draftOnly}` });
      expect(h.mirrorDoc(c, draftOnly)?.__deletedAt ?? 'no live row').not.toBeNull();
    },
  );
});

describe('an upstream that unpublishes a record on update anyway', () => {
  it('says so in the outcome and a warning, and tombstones the published row as unpublished', async () => {
    const h = await writeHarness({
      redisUrl: redis.url,
      sim: { records: 12, updatesOntoLatest: true },
      mirror: ['organizations'],
      drafts: true,
    });
    const { pending } = await threeRecords(h, 'organizations');
    expect(h.mirrorDoc('organizations', pending)?.__deletedAt).toBeNull();
    // An upstream that ignores `_status` in update bodies: the update lands on the pending draft and keeps its status.
    const ignoringStatus: PartnersClient = Object.create(h.client, {
      update: {
        value: (...args: Parameters<PartnersClient['update']>) => {
          const [col, id, method, body, q, opts] = args;
          const { _status: _ignored, ...rest } = body;
          return h.client.update(col, id, method, rest, q, opts);
        },
      },
    });
    const warn = vi.fn();
    const log: Logger = Object.create(silentLog, { warn: { value: warn } });
    const outcome = await applyWrite(
      { client: ignoringStatus, store: h.store, log, mirrorDrafts: true },
      { op: 'update', tenant: h.slug, collection: 'organizations', id: pending, body: { url: 'https://x.example' } },
      { signal: call.signal, priorUnknown: false, jobId: 'job-unpublished' },
    );
    expect(outcome).toMatchObject({ status: 'ok', resultId: pending });
    expect(outcome.status === 'ok' ? outcome.note : null).toMatch(/UNPUBLISHED by the upstream.*answers 404/);
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({ tenant: h.slug, collection: 'organizations', id: pending }),
      'update unpublished the record upstream',
    );
    const [row] = h.query<{ deleted_at: string | null; deleted_reason: string | null }>(
      'SELECT deleted_at, deleted_reason FROM organizations WHERE tenant = ? AND id = ?',
      h.slug,
      pending,
    );
    expect(row).toMatchObject({ deleted_reason: 'unpublished' });
    expect(row?.deleted_at).toBeTruthy();
  });
});

describe('an update of a record whose published version points at media since deleted', () => {
  // Issue 34, item 3: the restore re-sent the published version's `image`, and the upstream refused the dangling
  // reference (400), although the update does not touch it and the draft does not change it.
  it.each([
    ['a spec-faithful upstream', false],
    ['a Payload-like upstream', true],
  ])('succeeds with a pending draft, on %s, as it does without one', async (_name, updatesOntoLatest) => {
    const h = await writeHarness({
      redisUrl: redis.url,
      sim: { records: 12, updatesOntoLatest },
      mirror: ['organizations'],
      drafts: true,
    });
    const withImage = h.sim.controls
      .docs(h.slug, 'organizations')
      .filter((d) => d._status === 'published' && typeof d.image === 'string');
    const [pending, plain] = withImage.map(idOf);
    if (!pending || !plain) throw new Error('two published organizations with an image are needed');
    await h.client.update(
      'organizations',
      recordId(pending),
      'PUT',
      { name: 'Pending' },
      { draft: true, depth: 0 },
      call,
    );
    h.sim.controls.mutate({ tenant: h.slug, collection: 'media', deletes: 1000 });
    expect(h.sim.controls.docs(h.slug, 'media')).toHaveLength(0);
    await h.startWorker();
    const ids = [await h.queue.update(h.slug, 'organizations', pending, { type: 'presenter' })];
    ids.push(await h.queue.update(h.slug, 'organizations', plain, { type: 'presenter' }));
    for (const j of ids) {
      expect(await h.settled(j), `job ${j}`).toBe('completed');
      expect(h.logRow(j)).toMatchObject({ status: 'ok', note: null });
    }
    expect(read(h, 'organizations', pending, false)).toMatchObject({ type: 'presenter', _status: 'published' });
    expect(read(h, 'organizations', pending, true)).toMatchObject({ type: 'presenter', name: 'Pending' });
  });
});
