import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openMirror } from '../../src/store/open-mirror.js';
import { discoverRoutes } from '../../src/sync/discover-routes.js';
import { type CheckRow, checkTenant, driftingCollections, type TenantCheck } from '../../src/sync/self-check.js';
import { syncTenant } from '../../src/sync/sync-tenant.js';
import type { CollectionSlug } from '../../src/vocabulary/collections.js';
import { recordId } from '../../src/vocabulary/ids.js';
import { type Harness, syncHarness } from '../helpers/sync-harness.js';

const signal = () => new AbortController().signal;

/** A mirror of `collections` (a full pass), and a self-check of it with a page size of `pageSize`. */
async function checked(collections: CollectionSlug[], simOpts: Parameters<typeof syncHarness>[0] = {}) {
  const h = await syncHarness({ routes: 'full', maxLimit: 4, records: 10, ...simOpts });
  const target = { ...h.target, collections };
  const mirror = await openMirror(h.dbPath);
  onTestFinished(() => mirror.close());
  const routes = await discoverRoutes(h.client, { signal: signal() });
  const sync = () => syncTenant(h.deps(), target, 'full', signal(), routes);
  const report = await sync();
  for (const c of report.collections) expect(c.error, `${c.name}: ${c.error}`).toBeUndefined();
  const check = (opts: { countsOnly?: boolean; pageSize?: number } = {}) =>
    checkTenant(
      { client: h.client, store: h.store, checks: mirror.changes, signal: signal(), pageSize: 1000, ...opts },
      target,
      routes,
    );
  /** Changes the mirror by hand, as a person with sqlite3 would. */
  const edit = (sql: string, ...params: unknown[]) => {
    const db = new Database(h.dbPath);
    try {
      return db.prepare(sql).run(...params);
    } finally {
      db.close();
    }
  };
  return { h, check, edit, sync, mirror };
}

const rowOf = (c: TenantCheck, collection: CollectionSlug, variant = 'published'): CheckRow => {
  const row = c.collections.find((r) => r.collection === collection && r.variant === variant);
  if (!row) throw new Error(`no check row for ${collection}/${variant}`);
  return row;
};

const liveIds = (h: Harness, table: string) =>
  h
    .query<{ id: string }>(`SELECT id FROM ${table} WHERE tenant = ? AND deleted_at IS NULL ORDER BY id`, h.tenant.slug)
    .map((r) => r.id);

describe('the self-check compares ids and versions', () => {
  it('finds a row deleted by hand and one inserted by hand when the counts agree', async () => {
    const { h, check, edit } = await checked(['forms']);
    const clean = await check();
    expect(rowOf(clean, 'forms')).toMatchObject({ drift: 0, missing: 0, extra: 0, stale: 0 });
    expect(driftingCollections(clean)).toEqual([]);

    const ids = liveIds(h, 'forms');
    const gone = ids[0] as string;
    const source = ids.at(-1) as string;
    const extra = 'ba5e0000000000000000e1a1';
    const cols = h.query<{ name: string }>('PRAGMA table_info(forms)').map((c) => c.name);
    const sel = cols.map((c) => (c === 'id' ? '@extra' : c === 'doc' ? "json_set(doc, '$.id', @extra)" : c)).join(',');
    edit(`INSERT INTO forms (${cols.join(',')}) SELECT ${sel} FROM forms WHERE tenant = @t AND id = @source`, {
      extra,
      source,
      t: h.tenant.slug,
    });
    edit('DELETE FROM forms WHERE tenant = ? AND id = ?', h.tenant.slug, gone);

    const drifting = await check();
    const forms = rowOf(drifting, 'forms');
    expect(forms).toMatchObject({ drift: 0, missing: 1, extra: 1, stale: 0, missingIds: [gone], extraIds: [extra] });
    expect(forms.local).toBe(forms.upstream);
    expect(driftingCollections(drifting)).toEqual(['forms']);
  });

  it('finds records whose upstream version differs from the mirror, older or newer', async () => {
    const { h, check, edit } = await checked(['forms']);
    const edited = h.sim.controls.mutate({ tenant: h.tenant.slug, collection: 'forms', edits: 1 }).edited[0] as string;
    const ahead = liveIds(h, 'forms').find((id) => id !== edited) as string;
    edit("UPDATE forms SET updated_at = '2099-01-01T00:00:00.000Z' WHERE tenant = ? AND id = ?", h.tenant.slug, ahead);
    const c = await check();
    expect(rowOf(c, 'forms')).toMatchObject({
      drift: 0,
      missing: 0,
      extra: 0,
      stale: 2,
      staleIds: [edited, ahead].sort(),
    });
    // The row newer than the upstream is one a full pass would keep (newer wins): the check names it for repair.
    expect(c.aheadOfUpstream).toEqual([
      expect.objectContaining({
        key: { tenant: h.tenant.slug, collection: 'forms', variant: 'published' },
        ids: [ahead],
      }),
    ]);
  });

  it('costs one count plus one request per page, whatever the page size the upstream applies', async () => {
    const { h, check } = await checked(['forms', 'redirects']);
    const n = h.upstream('forms').length + h.upstream('redirects').length;
    expect(h.upstream('forms').length).toBe(10);
    // The simulator clamps pages to 4: 10 records take 3 pages, plus the count.
    expect((await check()).requests).toBe(2 * (1 + 3));
    expect((await check({ countsOnly: true })).requests).toBe(2);
    expect(n).toBe(20);
  });

  it('pages records sharing one updatedAt across page boundaries without reporting them', async () => {
    const { h, check, sync } = await checked(['forms']);
    h.sim.controls.mutate({ tenant: h.tenant.slug, collection: 'forms', creates: 7, edits: 6, sameUpdatedAt: true });
    await sync();
    const c = await check();
    expect(rowOf(c, 'forms')).toMatchObject({ upstream: 17, drift: 0, missing: 0, extra: 0, stale: 0 });
    expect(c.requests).toBe(1 + 5);
  });

  it('compares records without updatedAt apart, by id', async () => {
    const { h, check, sync, edit } = await checked(['forms']);
    const undated = h.sim.controls.mutate({ tenant: h.tenant.slug, collection: 'forms', creates: 2, updatedAt: null });
    await sync();
    expect((await check()).collections[0]).toMatchObject({ upstream: 12, missing: 0, extra: 0, stale: 0 });
    edit('DELETE FROM forms WHERE tenant = ? AND id = ?', h.tenant.slug, undated.created[0]);
    const c = await check();
    expect(rowOf(c, 'forms')).toMatchObject({ drift: 1, missing: 1, extra: 0, missingIds: [undated.created[0]] });
  });

  it('names a record edited while the check reads it once, as stale', async () => {
    const { h, check } = await checked(['forms']);
    // The first record in (updatedAt, id) order: on the first page, then listed again at the end once edited.
    const first = [...h.upstream('forms')].sort((a, b) =>
      String(a.updatedAt) === String(b.updatedAt)
        ? String(a.id).localeCompare(String(b.id))
        : String(a.updatedAt).localeCompare(String(b.updatedAt)),
    )[0];
    const id = String(first?.id);
    // The check's requests: the count, then the id pages; the edit lands before the second id page.
    let lists = 0;
    const off = h.sim.controls.beforeRequest(async (req) => {
      if (req.method !== 'GET' || ++lists !== 3) return;
      await h.client.update('forms', recordId(id), 'PATCH', { title: 'Edited mid-check' }, {}, { signal: signal() });
    });
    const c = await check();
    off();
    expect(rowOf(c, 'forms')).toMatchObject({ drift: 0, missing: 0, extra: 0, stale: 1, staleIds: [id] });
  });

  it('names a record unpublished upstream and still live in the mirror; a full pass tombstones it as unpublished', async () => {
    const { h, check, sync } = await checked(['series']);
    const id = liveIds(h, 'series')[3] as string;
    const res = await fetch(`${h.sim.url}/partners/2026-02/${h.tenant.slug}/series/${id}`, {
      method: 'PATCH',
      headers: { authorization: `users API-Key ${h.tenant.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ _status: 'draft' }),
    });
    expect(res.status).toBe(200);
    const found = rowOf(await check(), 'series');
    expect(found).toMatchObject({
      drift: -1,
      missing: 0,
      extra: 1,
      extraIds: [id],
      unpublished: 1,
      unpublishedIds: [id],
    });
    const report = await sync();
    expect(report.collections[0]).toMatchObject({ deleted: 1, unpublished: 1 });
    expect(
      h.query<{ deleted_reason: string }>(
        'SELECT deleted_reason FROM series WHERE tenant = ? AND id = ?',
        h.tenant.slug,
        id,
      ),
    ).toEqual([{ deleted_reason: 'unpublished' }]);
    expect(rowOf(await check(), 'series')).toMatchObject({ drift: 0, extra: 0, unpublished: 0 });
  });

  it('keys media by filename', async () => {
    const { h, check, edit } = await checked(['media']);
    const gone = liveIds(h, 'media')[2] as string;
    edit('DELETE FROM media WHERE tenant = ? AND id = ?', h.tenant.slug, gone);
    expect(rowOf(await check(), 'media')).toMatchObject({ drift: 1, missing: 1, extra: 0, missingIds: [gone] });
  });

  it('with countsOnly, compares counts alone (one request each) and keeps the results without id figures', async () => {
    const { h, check, edit, mirror } = await checked(['forms']);
    edit('DELETE FROM forms WHERE tenant = ? AND id = ?', h.tenant.slug, liveIds(h, 'forms')[0]);
    const c = await check({ countsOnly: true });
    expect(rowOf(c, 'forms')).toEqual({
      collection: 'forms',
      variant: 'published',
      local: 9,
      upstream: 10,
      drift: 1,
      missing: null,
      extra: null,
      stale: null,
    });
    expect(await mirror.changes.lastChecks()).toEqual([
      expect.objectContaining({ collection: 'forms', drift: 1, missing: null, extra: null, stale: null }),
    ]);
    await check();
    expect(await mirror.changes.lastChecks()).toEqual([
      expect.objectContaining({ collection: 'forms', drift: 1, missing: 1, extra: 0, stale: 0 }),
    ]);
  });
});
