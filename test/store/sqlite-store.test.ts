import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TYPED_COLUMNS } from '../../src/store/columns.js';
import { openSqliteStore } from '../../src/store/sqlite-store.js';
import { PUBLISHED, type Store, type SyncKey, type SyncState } from '../../src/store/store.js';
import { COLLECTIONS, type CollectionSlug, tableFor } from '../../src/vocabulary/collections.js';
import { type JsonObject, tenantSlug } from '../../src/vocabulary/ids.js';

const T = tenantSlug('acme');
const key = (collection: CollectionSlug, variant = PUBLISHED): SyncKey => ({ tenant: T, collection, variant });
const blank: SyncState = { cursor: null, full: null, incremental: null, lastSuccessAt: null, lastError: null };
const stateAt = (updatedAt: string, id: string): SyncState => ({ ...blank, cursor: { updatedAt, id } });

const makeInstance = (over: JsonObject = {}): JsonObject => ({
  id: 'ei-1',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-03-01T10:00:00.000Z',
  event: 'ev-1',
  venue: { id: 'ven-1', title: 'Main Hall' },
  startDate: '2026-05-01T19:30:00+02:00',
  startDate_tz: 'Europe/Berlin',
  ticketingA: { performanceId: 'p1', availability: 'good' },
  ...over,
});

let dir: string;
let path: string;
let store: Store;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'understudy-'));
  path = join(dir, 'nested', 'mirror.db');
  store = await openSqliteStore(path);
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Reads with a second connection, as a user of `understudy sql` would. */
const query = <R = Record<string, unknown>>(q: string, ...params: unknown[]): R[] => {
  const db = new BetterSqlite3(path, { readonly: true });
  try {
    return db.prepare(q).all(...params) as R[];
  } finally {
    db.close();
  }
};

describe('migrations', () => {
  it('create every collection table with its typed columns, and the bookkeeping tables', () => {
    const tables = query<{ name: string }>("SELECT name FROM sqlite_master WHERE type='table'").map((r) => r.name);
    for (const c of COLLECTIONS) {
      expect(tables).toContain(tableFor(c));
      const cols = query<{ name: string }>(`PRAGMA table_info(${tableFor(c)})`).map((r) => r.name);
      for (const base of ['tenant', 'id', 'updated_at', 'created_at', 'doc', 'deleted_at', 'seen_run', 'mirrored_at'])
        expect(cols).toContain(base);
      for (const t of TYPED_COLUMNS[c]) expect(cols, `${c}.${t.column}`).toContain(t.column);
    }
    for (const t of ['doc_variants', 'sync_state', 'sync_runs', 'theme_settings_schemas']) expect(tables).toContain(t);
    const idx = query<{ name: string }>("SELECT name FROM sqlite_master WHERE type='index'").map((r) => r.name);
    expect(idx).toContain('event_instances_tenant_event_id');
    expect(idx).toContain('events_sync');
  });

  it('run again on reopen without error and keep the data', async () => {
    await store.applyPage(key('series'), [{ id: 's1', updatedAt: '2026-01-01T00:00:00Z', title: 'S' }], blank);
    await store.close();
    store = await openSqliteStore(path);
    expect(await store.liveIds(key('series'))).toEqual(new Set(['s1']));
  });

  it('open the file in WAL mode', () => {
    expect(query<{ journal_mode: string }>('PRAGMA journal_mode')[0]?.journal_mode).toBe('wal');
  });
});

describe('applyPage', () => {
  it('counts inserted, updated and unchanged and extracts typed columns', async () => {
    const k = key('event-instances');
    const first = await store.applyPage(k, [makeInstance(), makeInstance({ id: 'ei-2' })], blank);
    expect(first).toEqual({ inserted: 2, updated: 0, unchanged: 0 });
    const second = await store.applyPage(
      k,
      [
        makeInstance({ updatedAt: '2026-03-02T00:00:00Z', booking: { bookingLinkLabel: 'x' } }),
        makeInstance({ id: 'ei-2' }),
      ],
      blank,
    );
    expect(second).toEqual({ inserted: 0, updated: 1, unchanged: 1 });
    const [row] = query('SELECT * FROM event_instances WHERE id = ?', 'ei-1');
    expect(row).toMatchObject({
      tenant: 'acme',
      event_id: 'ev-1',
      venue_id: 'ven-1',
      start_date: '2026-05-01T17:30:00.000Z',
      start_date_tz: 'Europe/Berlin',
      availability: 'good',
      updated_at: '2026-03-02T00:00:00.000Z',
      deleted_at: null,
    });
    expect(JSON.parse(String(row?.doc))).toEqual(
      makeInstance({ updatedAt: '2026-03-02T00:00:00Z', booking: { bookingLinkLabel: 'x' } }),
    );
  });

  it('keeps the newer row: older updatedAt ignored, equal unchanged, other offsets compared as instants', async () => {
    const k = key('series');
    await store.applyPage(k, [{ id: 's', updatedAt: '2026-03-01T12:00:00.000Z', title: 'A' }], blank);
    expect(await store.applyPage(k, [{ id: 's', updatedAt: '2026-03-01T11:00:00Z', title: 'older' }], blank)).toEqual({
      inserted: 0,
      updated: 0,
      unchanged: 1,
    });
    // 13:30+02:00 is 11:30Z: older, although it sorts later as a string.
    expect(await store.applyPage(k, [{ id: 's', updatedAt: '2026-03-01T13:30:00+02:00', title: 'B' }], blank)).toEqual({
      inserted: 0,
      updated: 0,
      unchanged: 1,
    });
    // 14:00+02:00 is 12:00Z: equal, so unchanged.
    expect(await store.applyPage(k, [{ id: 's', updatedAt: '2026-03-01T14:00:00+02:00', title: 'C' }], blank)).toEqual({
      inserted: 0,
      updated: 0,
      unchanged: 1,
    });
    // 07:00-06:00 is 13:00Z: newer, although it sorts earlier as a string.
    expect(await store.applyPage(k, [{ id: 's', updatedAt: '2026-03-01T07:00:00-06:00', title: 'D' }], blank)).toEqual({
      inserted: 0,
      updated: 1,
      unchanged: 0,
    });
    expect(query('SELECT title, updated_at FROM series')).toEqual([
      { title: 'D', updated_at: '2026-03-01T13:00:00.000Z' },
    ]);
  });

  it('saves the sync state in the same transaction', async () => {
    const k = key('events');
    const next: SyncState = {
      cursor: { updatedAt: '2026-03-01T00:00:00Z', id: '9' },
      full: { runId: 'run-1', after: { updatedAt: '2026-02-01T00:00:00Z', id: '3' } },
      incremental: { after: null },
      lastSuccessAt: '2026-03-01T00:00:01Z',
      lastError: 'earlier failure',
    };
    await store.applyPage(k, [{ id: 1, updatedAt: '2026-01-01T00:00:00Z' }], next);
    expect(await store.getSyncState(k)).toEqual(next);
    expect(await store.getSyncState(key('pages'))).toEqual(blank);
    await store.saveSyncState(k, blank);
    expect(await store.getSyncState(k)).toEqual(blank);
  });

  it('rolls back rows and state when a page fails', async () => {
    const k = key('events');
    await store.applyPage(
      k,
      [{ id: 'a', updatedAt: '2026-01-01T00:00:00Z', title: 'A' }],
      stateAt('2026-01-01T00:00:00Z', 'a'),
    );
    await expect(
      store.applyPage(
        k,
        [
          { id: 'a', updatedAt: '2026-02-01T00:00:00Z', title: 'A2' },
          { id: 'b', updatedAt: '2026-02-01T00:00:00Z' },
          { title: 'no id' },
        ],
        stateAt('2026-02-01T00:00:00Z', 'b'),
      ),
    ).rejects.toMatchObject({ code: 'US_STORE', message: expect.stringContaining('events') });
    expect(query('SELECT id, title FROM events')).toEqual([{ id: 'a', title: 'A' }]);
    expect((await store.getSyncState(k)).cursor).toEqual({ updatedAt: '2026-01-01T00:00:00Z', id: 'a' });
  });

  it('stores numeric ids as text and reads references sent as numbers or objects', async () => {
    await store.applyPage(
      key('events'),
      [{ id: 42, updatedAt: '2026-01-01T00:00:00Z', season: 7, venue: { id: 8 }, organization: '9' }],
      blank,
    );
    expect(query('SELECT id, typeof(id) AS t, season_id, venue_id, organization_id FROM events')).toEqual([
      { id: '42', t: 'text', season_id: '7', venue_id: '8', organization_id: '9' },
    ]);
    expect(await store.applyPage(key('events'), [{ id: '42', updatedAt: '2026-01-01T00:00:00Z' }], blank)).toEqual({
      inserted: 0,
      updated: 0,
      unchanged: 1,
    });
  });

  it('keys media without an id by filename', async () => {
    const k = key('media');
    const m = { filename: 'poster.jpg', url: '/media/poster.jpg', width: 800, updatedAt: '2026-01-01T00:00:00Z' };
    await store.applyPage(k, [m], blank);
    expect(await store.applyPage(k, [{ ...m, updatedAt: '2026-01-02T00:00:00Z', alt: 'A' }], blank)).toEqual({
      inserted: 0,
      updated: 1,
      unchanged: 0,
    });
    expect(query('SELECT id, filename, url, width, alt FROM media')).toEqual([
      { id: 'poster.jpg', filename: 'poster.jpg', url: '/media/poster.jpg', width: 800, alt: 'A' },
    ]);
    await expect(store.applyPage(k, [{ url: '/x' }], blank)).rejects.toMatchObject({
      code: 'US_STORE',
      message: expect.stringContaining('media'),
    });
  });

  it('keeps variants apart from published rows', async () => {
    await store.applyPage(
      key('pages'),
      [{ id: 'p', updatedAt: '2026-01-01T00:00:00Z', title: 'Live', _status: 'published' }],
      blank,
    );
    const draft = key('pages', 'draft');
    expect(
      await store.applyPage(
        draft,
        [{ id: 'p', updatedAt: '2026-01-05T00:00:00Z', title: 'Draft', _status: 'draft' }],
        blank,
      ),
    ).toEqual({ inserted: 1, updated: 0, unchanged: 0 });
    await store.applyPage(
      key('pages', 'locale:fr'),
      [{ id: 'p', updatedAt: '2026-01-02T00:00:00Z', title: 'Vivant' }],
      blank,
    );
    expect(query('SELECT id, title, status FROM pages')).toEqual([{ id: 'p', title: 'Live', status: 'published' }]);
    expect(query('SELECT collection, id, variant FROM doc_variants ORDER BY variant')).toEqual([
      { collection: 'pages', id: 'p', variant: 'draft' },
      { collection: 'pages', id: 'p', variant: 'locale:fr' },
    ]);
    expect(await store.liveIds(draft)).toEqual(new Set(['p']));
    expect(await store.markDeleted(draft, 'p', '2026-02-01T00:00:00Z')).toBe(true);
    expect(await store.liveIds(draft)).toEqual(new Set());
    expect(await store.liveIds(key('pages'))).toEqual(new Set(['p']));
  });
});

describe('completeFull', () => {
  it('marks rows the run did not see, and a later upsert revives them', async () => {
    const k = key('series');
    const docs = ['a', 'b', 'c'].map((id) => ({ id, updatedAt: '2026-01-01T00:00:00Z' }));
    await store.applyPage(k, docs, blank, 'run-1');
    expect(await store.completeFull(k, 'run-1', blank, '2026-01-02T00:00:00Z')).toBe(0);
    // run-2 sees a and c, unchanged: they are still marked seen.
    expect(await store.applyPage(k, [docs[0]!, docs[2]!], blank, 'run-2')).toEqual({
      inserted: 0,
      updated: 0,
      unchanged: 2,
    });
    const done = { ...blank, lastSuccessAt: '2026-01-03T00:00:00Z' };
    expect(await store.completeFull(k, 'run-2', done, '2026-01-03T00:00:00Z')).toBe(1);
    expect(query('SELECT id, deleted_at FROM series ORDER BY id')).toEqual([
      { id: 'a', deleted_at: null },
      { id: 'b', deleted_at: '2026-01-03T00:00:00Z' },
      { id: 'c', deleted_at: null },
    ]);
    expect(await store.getSyncState(k)).toEqual(done);
    expect(await store.liveIds(k)).toEqual(new Set(['a', 'c']));
    // b comes back with the same updatedAt: revived.
    expect(await store.applyPage(k, [docs[1]!], blank)).toEqual({ inserted: 0, updated: 1, unchanged: 0 });
    expect(query("SELECT deleted_at FROM series WHERE id = 'b'")).toEqual([{ deleted_at: null }]);
  });

  it('only touches its own tenant and variant', async () => {
    await store.applyPage(key('series'), [{ id: 'a', updatedAt: '2026-01-01T00:00:00Z' }], blank);
    await store.applyPage({ ...key('series'), tenant: tenantSlug('other') }, [{ id: 'a' }], blank);
    await store.applyPage(key('series', 'draft'), [{ id: 'a' }], blank);
    expect(await store.completeFull(key('series'), 'run-x', blank, '2026-01-02T00:00:00Z')).toBe(1);
    expect(query('SELECT tenant FROM series WHERE deleted_at IS NULL')).toEqual([{ tenant: 'other' }]);
    expect(query('SELECT count(*) AS n FROM doc_variants WHERE deleted_at IS NULL')).toEqual([{ n: 1 }]);
  });
});

describe('the rest of the port', () => {
  it('upsertDocs follows newer-wins and markDeleted marks once', async () => {
    const k = key('posts');
    expect(await store.upsertDocs(k, [{ id: 'p', updatedAt: '2026-01-01T00:00:00Z', blog: 'b1' }])).toEqual({
      inserted: 1,
      updated: 0,
      unchanged: 0,
    });
    expect(query('SELECT blog_id FROM posts')).toEqual([{ blog_id: 'b1' }]);
    expect(await store.markDeleted(k, 'p', '2026-01-02T00:00:00Z')).toBe(true);
    expect(await store.markDeleted(k, 'p', '2026-01-03T00:00:00Z')).toBe(false);
    expect(await store.markDeleted(k, 'missing', '2026-01-03T00:00:00Z')).toBe(false);
  });

  it('answers every record query alike for published rows and for a variant, each within its own rows', async () => {
    const at = (d: number) => `2026-01-0${d}T00:00:00.000Z`;
    const docs = [1, 2, 3].map((d) => ({ id: `e${d}`, updatedAt: at(d), title: `E${d}` }));
    const other = { tenant: tenantSlug('other'), collection: 'events', variant: 'draft' } as const;
    await store.applyPage(other, docs, blank, 'run-x');
    for (const k of [key('events'), key('events', 'draft'), key('events', 'locale:fr')]) {
      expect(await store.applyPage(k, docs, blank, 'run-1')).toEqual({ inserted: 3, updated: 0, unchanged: 0 });
      expect(await store.applyPage(k, docs.slice(0, 1), blank, 'run-2')).toEqual({
        inserted: 0,
        updated: 0,
        unchanged: 1,
      });
      expect((await store.unseenIds(k, 'run-2')).sort()).toEqual(['e2', 'e3']);
      expect(await store.countUpdatedBetween(k, at(2), at(3))).toBe(2);
      expect(await store.completeFull(k, 'run-2', blank, at(9), ['e3'])).toBe(1);
      expect([...(await store.liveIds(k))].sort()).toEqual(['e1', 'e3']);
      expect(await store.markDeleted(k, 'e3', at(9))).toBe(true);
      expect(await store.markDeleted(k, 'e2', at(9))).toBe(false);
      const scanned: unknown[] = [];
      await store.scanDocs(k, (d) => scanned.push(d.id));
      expect(scanned).toEqual(['e1']);
      expect(await store.upsertDocs(k, [{ ...docs[1]!, updatedAt: at(4) }])).toEqual({
        inserted: 0,
        updated: 1,
        unchanged: 0,
      });
      expect([...(await store.liveIds(k))].sort()).toEqual(['e1', 'e2']);
    }
    expect([...(await store.liveIds(other))].sort()).toEqual(['e1', 'e2', 'e3']);
    expect(query('SELECT seen_run FROM doc_variants WHERE tenant = ? AND id = ?', 'acme', 'e1')).toEqual([
      { seen_run: 'run-2' },
      { seen_run: 'run-2' },
    ]);
  });

  it('scanDocs streams every live doc', async () => {
    const k = key('venues');
    const docs = Array.from({ length: 1203 }, (_, i) => ({ id: `v${String(i).padStart(5, '0')}`, city: 'Oslo' }));
    await store.applyPage(k, docs, blank);
    await store.markDeleted(k, 'v00007', '2026-01-01T00:00:00Z');
    const seen: string[] = [];
    await store.scanDocs(k, (d) => seen.push(String(d.id)));
    expect(seen).toHaveLength(1202);
    expect(seen).not.toContain('v00007');
  });

  it('saves and reads theme schemas', async () => {
    expect(await store.getThemeSchema(T, 'events')).toBeNull();
    await store.saveThemeSchema(T, 'events', { collection: 'events', fields: [] }, '2026-01-01T00:00:00Z');
    await store.saveThemeSchema(T, 'events', { collection: 'events', fields: [{ key: 'x' }] }, '2026-01-02T00:00:00Z');
    expect(await store.getThemeSchema(T, 'events')).toEqual({ collection: 'events', fields: [{ key: 'x' }] });
  });

  it('records runs and reports mirror status', async () => {
    await store.applyPage(key('series'), [{ id: 'a' }, { id: 'b' }, { id: 'c' }], {
      ...blank,
      lastSuccessAt: '2026-01-01T00:00:00Z',
    });
    await store.markDeleted(key('series'), 'b', '2026-01-02T00:00:00Z');
    await store.saveSyncState(key('events'), { ...blank, lastError: 'US_UPSTREAM_UNAVAILABLE' });
    await store.recordRun({
      runId: 'r1',
      tenant: T,
      collection: 'series',
      variant: PUBLISHED,
      mode: 'full',
      startedAt: '2026-01-01T00:00:00Z',
      finishedAt: '2026-01-01T00:00:01Z',
      status: 'ok',
      fetched: 3,
      inserted: 3,
      updated: 0,
      unchanged: 0,
      deleted: 0,
      requests: 2,
      ms: 12.4,
      error: null,
    });
    expect(query('SELECT run_id, collection, fetched, ms FROM sync_runs')).toEqual([
      { run_id: 'r1', collection: 'series', fetched: 3, ms: 12 },
    ]);
    expect(await store.mirrorStatus()).toEqual([
      {
        tenant: 'acme',
        collection: 'series',
        live: 2,
        deleted: 1,
        lastSuccessAt: '2026-01-01T00:00:00Z',
        lastError: null,
      },
      {
        tenant: 'acme',
        collection: 'events',
        live: 0,
        deleted: 0,
        lastSuccessAt: null,
        lastError: 'US_UPSTREAM_UNAVAILABLE',
      },
    ]);
  });

  it('closes idempotently', async () => {
    await store.close();
    await store.close();
    store = await openSqliteStore(path);
  });
});
