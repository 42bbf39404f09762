import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BLANK_SYNC_STATE, PUBLISHED, type Store, type SyncKey, type SyncState } from '../../src/sync/store-port.js';
import type { Clock } from '../../src/vocabulary/clock.js';
import type { CollectionSlug } from '../../src/vocabulary/collections.js';
import { parseExactJson } from '../../src/vocabulary/exact-json.js';
import { type JsonObject, tenantSlug } from '../../src/vocabulary/ids.js';
import { type ManualClock, manualClock } from '../helpers/manual-clock.js';

/**
 * A mirror for the contract suite, on one engine. `query` runs portable SQL (`?` placeholders) on a connection of
 * its own and returns rows with numbers as numbers and `doc` parsed (exactly), whatever the engine.
 */
export interface ContractMirror {
  /**
   * Opens a store on the mirror (every call a new connection or pool, as a second process would), reckoning lease
   * expiry by `clock`.
   */
  open(clock: Clock): Promise<Store>;
  query(sqlText: string, params?: readonly unknown[]): Promise<Record<string, unknown>[]>;
  /** Drops the mirror. */
  destroy(): Promise<void>;
}

/** Normalises a row read by a harness: engines differ in how they hand back counts and JSON. */
export const normaliseRow = (row: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(row).map(([k, v]) => {
      if (k === 'doc' && typeof v === 'string') return [k, parseExactJson(v)];
      if (typeof v === 'bigint' && Number.isSafeInteger(Number(v))) return [k, Number(v)];
      if (k === 'n' && typeof v === 'string' && /^\d+$/.test(v)) return [k, Number(v)];
      return [k, v];
    }),
  );

const T = tenantSlug('acme');
const key = (collection: CollectionSlug, variant = PUBLISHED): SyncKey => ({ tenant: T, collection, variant });
const blank: SyncState = BLANK_SYNC_STATE;
const at = (day: number, hour = 0) => new Date(Date.UTC(2026, 0, day, hour)).toISOString();

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

const counts = (r: { inserted: number; updated: number; revived: number; deleted: number; unchanged: number }) => ({
  inserted: r.inserted,
  updated: r.updated,
  revived: r.revived,
  deleted: r.deleted,
  unchanged: r.unchanged,
});
const none = { inserted: 0, updated: 0, revived: 0, deleted: 0, unchanged: 0 };

/**
 * The store's behaviour through its port, engine-blind: the same suite runs on every adapter (SQLite, PostgreSQL).
 * It covers the one write path, newer-wins, tombstones, the full pass's rules, fencing, and exact values.
 */
export function storeContract(engine: string, make: () => Promise<ContractMirror>): void {
  describe(`the store contract on ${engine}`, () => {
    let mirror: ContractMirror;
    let store: Store;
    let others: Store[];
    // Every store of a test reads the one clock, as processes on one host read one: leases expire when it moves.
    let clock: ManualClock;
    const another = async () => {
      const s = await mirror.open(clock);
      others.push(s);
      return s;
    };
    beforeEach(async () => {
      mirror = await make();
      clock = manualClock();
      store = await mirror.open(clock);
      others = [];
    });
    afterEach(async () => {
      for (const s of others) await s.close();
      await store.close();
      await mirror.destroy();
    });

    describe('write: upserts', () => {
      it('returns what changed per id, counts, and extracts typed columns', async () => {
        const k = key('event-instances');
        const first = await store.write(k, { upserts: [makeInstance(), makeInstance({ id: 'ei-2' })], next: blank });
        expect(counts(first)).toEqual({ ...none, inserted: 2 });
        expect([...first.changes].sort((a, b) => a.id.localeCompare(b.id))).toEqual([
          { id: 'ei-1', kind: 'insert' },
          { id: 'ei-2', kind: 'insert' },
        ]);
        const edited = makeInstance({ updatedAt: '2026-03-02T00:00:00Z', booking: { bookingLinkLabel: 'x' } });
        const second = await store.write(k, { upserts: [edited, makeInstance({ id: 'ei-2' })] });
        expect(counts(second)).toEqual({ ...none, updated: 1, unchanged: 1 });
        expect(second.changes).toEqual([{ id: 'ei-1', kind: 'update' }]);
        const [row] = await mirror.query('SELECT * FROM event_instances WHERE id = ?', ['ei-1']);
        expect(row).toMatchObject({
          tenant: 'acme',
          event_id: 'ev-1',
          venue_id: 'ven-1',
          start_date: '2026-05-01T17:30:00.000Z',
          start_date_tz: 'Europe/Berlin',
          availability: 'good',
          updated_at: '2026-03-02T00:00:00.000Z',
          deleted_at: null,
          doc: edited,
        });
      });

      it('keeps the newer row: older ignored, equal unchanged, offsets compared as instants', async () => {
        const k = key('series');
        await store.write(k, { upserts: [{ id: 's', updatedAt: '2026-03-01T12:00:00.000Z', title: 'A' }] });
        const older = await store.write(k, { upserts: [{ id: 's', updatedAt: '2026-03-01T11:00:00Z', title: 'x' }] });
        expect(counts(older)).toEqual({ ...none, unchanged: 1 });
        // 13:30+02:00 is 11:30Z: older, although it sorts later as a string.
        const later = await store.write(k, { upserts: [{ id: 's', updatedAt: '2026-03-01T13:30:00+02:00' }] });
        expect(counts(later)).toEqual({ ...none, unchanged: 1 });
        // 14:00+02:00 is 12:00Z: equal, so unchanged.
        const equal = await store.write(k, { upserts: [{ id: 's', updatedAt: '2026-03-01T14:00:00+02:00' }] });
        expect(counts(equal)).toEqual({ ...none, unchanged: 1 });
        // 07:00-06:00 is 13:00Z: newer, although it sorts earlier as a string.
        const newer = await store.write(k, {
          upserts: [{ id: 's', updatedAt: '2026-03-01T07:00:00-06:00', title: 'D' }],
        });
        expect(counts(newer)).toEqual({ ...none, updated: 1 });
        expect(await mirror.query('SELECT title, updated_at FROM series')).toEqual([
          { title: 'D', updated_at: '2026-03-01T13:00:00.000Z' },
        ]);
      });

      it('compares undated records by content, and keeps the last of duplicate ids in one batch', async () => {
        const k = key('forms');
        await store.write(k, { upserts: [{ id: 'f', updatedAt: null, title: 'A' }] });
        expect(counts(await store.write(k, { upserts: [{ id: 'f', updatedAt: null, title: 'A' }] }))).toEqual({
          ...none,
          unchanged: 1,
        });
        expect(counts(await store.write(k, { upserts: [{ id: 'f', updatedAt: null, title: 'B' }] }))).toEqual({
          ...none,
          updated: 1,
        });
        const dup = await store.write(k, {
          upserts: [
            { id: 'g', updatedAt: at(1), title: 'first' },
            { id: 'g', updatedAt: at(2), title: 'second' },
          ],
        });
        expect(counts(dup)).toEqual({ ...none, inserted: 1 });
        expect(await mirror.query("SELECT title FROM forms WHERE id = 'g'")).toEqual([{ title: 'second' }]);
      });

      it('saves the sync state in the same transaction, and rolls everything back when the batch fails', async () => {
        const k = key('events');
        const next: SyncState = {
          cursor: { updatedAt: '2026-03-01T00:00:00Z', id: '9' },
          full: { runId: 'run-1', startedAt: at(1), after: { updatedAt: '2026-02-01T00:00:00Z', id: '3' } },
          incremental: { after: null },
          lastSuccessAt: '2026-03-01T00:00:01Z',
          lastError: 'earlier failure',
          lastErrorAt: '2026-03-01T00:00:00.500Z',
          lastErrorVariant: PUBLISHED,
        };
        await store.write(k, { upserts: [{ id: 'a', updatedAt: at(1), title: 'A' }], next });
        expect(await store.getSyncState(k)).toEqual(next);
        expect(await store.getSyncState(key('pages'))).toEqual(blank);
        await expect(
          store.write(k, {
            upserts: [{ id: 'a', updatedAt: at(2), title: 'A2' }, { id: 'b', updatedAt: at(2) }, { title: 'no id' }],
            next: blank,
          }),
        ).rejects.toMatchObject({ code: 'US_STORE', message: expect.stringContaining('events') });
        expect(await mirror.query('SELECT id, title FROM events')).toEqual([{ id: 'a', title: 'A' }]);
        expect(await store.getSyncState(k)).toEqual(next);
        await store.write(k, { next: blank });
        expect(await store.getSyncState(k)).toEqual(blank);
      });

      it('stores numeric ids as text and reads references sent as numbers or objects', async () => {
        await store.write(key('events'), {
          upserts: [{ id: 42, updatedAt: at(1), season: 7, venue: { id: 8 }, organization: '9' }],
        });
        expect(await mirror.query('SELECT id, season_id, venue_id, organization_id FROM events')).toEqual([
          { id: '42', season_id: '7', venue_id: '8', organization_id: '9' },
        ]);
        expect(counts(await store.write(key('events'), { upserts: [{ id: '42', updatedAt: at(1) }] }))).toEqual({
          ...none,
          unchanged: 1,
        });
      });

      it('keeps ids and integers beyond 2^53 exactly, as two rows and in doc', async () => {
        const text = `[{"id":9007199254740992,"updatedAt":"${at(1)}","title":"A","n":12345678901234567890},
          {"id":9007199254740993,"updatedAt":"${at(2)}","title":"B"}]`;
        const docs = parseExactJson(text) as JsonObject[];
        expect(counts(await store.write(key('forms'), { upserts: docs }))).toEqual({ ...none, inserted: 2 });
        const rows = await mirror.query('SELECT id, doc FROM forms ORDER BY id');
        expect(rows.map((r) => r.id)).toEqual(['9007199254740992', '9007199254740993']);
        const [a, b] = rows.map((r) => r.doc as JsonObject);
        expect(a?.id).toBe(9007199254740992n);
        expect(a?.n).toBe(12345678901234567890n);
        expect(b?.id).toBe(9007199254740993n);
      });

      it('keys media without an id by filename, and refuses a record with neither', async () => {
        const k = key('media');
        const m = { filename: 'poster.jpg', url: '/media/poster.jpg', width: 800, updatedAt: at(1) };
        await store.write(k, { upserts: [m] });
        expect(counts(await store.write(k, { upserts: [{ ...m, updatedAt: at(2), alt: 'A' }] }))).toEqual({
          ...none,
          updated: 1,
        });
        expect(await mirror.query('SELECT id, filename, url, width, alt FROM media')).toEqual([
          { id: 'poster.jpg', filename: 'poster.jpg', url: '/media/poster.jpg', width: 800, alt: 'A' },
        ]);
        await expect(store.write(k, { upserts: [{ url: '/x' }] })).rejects.toMatchObject({
          code: 'US_STORE',
          message: expect.stringContaining('media'),
        });
      });

      it('keeps variants apart from published rows and from other tenants', async () => {
        await store.write(key('pages'), {
          upserts: [{ id: 'p', updatedAt: at(1), title: 'Live', _status: 'published' }],
        });
        const draft = key('pages', 'draft');
        const d = await store.write(draft, {
          upserts: [{ id: 'p', updatedAt: at(5), title: 'Draft', _status: 'draft' }],
        });
        expect(counts(d)).toEqual({ ...none, inserted: 1 });
        await store.write(key('pages', 'locale:fr'), { upserts: [{ id: 'p', updatedAt: at(2), title: 'Vivant' }] });
        await store.write({ ...key('pages'), tenant: tenantSlug('other') }, { upserts: [{ id: 'p', title: 'O' }] });
        expect(await mirror.query("SELECT id, title, status FROM pages WHERE tenant = 'acme'")).toEqual([
          { id: 'p', title: 'Live', status: 'published' },
        ]);
        expect(await mirror.query('SELECT collection, id, variant FROM doc_variants ORDER BY variant')).toEqual([
          { collection: 'pages', id: 'p', variant: 'draft' },
          { collection: 'pages', id: 'p', variant: 'locale:fr' },
        ]);
        expect(counts(await store.write(draft, { deletes: ['p'] }))).toEqual({ ...none, deleted: 1 });
        expect(await store.liveIds(draft)).toEqual(new Set());
        expect(await store.liveIds(key('pages'))).toEqual(new Set(['p']));
      });
    });

    describe('write: tombstones obey newer-wins', () => {
      it('a delete marks a live row once and reports it', async () => {
        const k = key('posts');
        await store.write(k, { upserts: [{ id: 'p', updatedAt: at(1), blog: 'b1' }] });
        const del = await store.write(k, { deletes: ['p', 'missing'], now: at(2) });
        expect(del.changes).toEqual([{ id: 'p', kind: 'delete' }]);
        expect(counts(await store.write(k, { deletes: ['p'], now: at(3) }))).toEqual(none);
        expect(await mirror.query('SELECT deleted_at, deleted_reason, last_change FROM posts')).toEqual([
          { deleted_at: at(2), deleted_reason: 'deleted', last_change: 'delete' },
        ]);
      });

      it('a page fetched before a delete never revives the row; a newer record or a later fetch does', async () => {
        const k = key('event-instances');
        const x = makeInstance({ id: 'x', updatedAt: at(1) });
        await store.write(k, { upserts: [x], now: at(1, 1) });
        await store.write(k, { deletes: ['x'], now: at(3) });
        // The page was fetched at day 2, before the delete of day 3, and commits after it: no revival.
        const stale = await store.write(k, { upserts: [x], fetchedAt: at(2), now: at(4) });
        expect(counts(stale)).toEqual({ ...none, unchanged: 1 });
        expect(await store.liveIds(k)).toEqual(new Set());
        // The same record fetched after the delete: it exists upstream again.
        const fresh = await store.write(k, { upserts: [x], fetchedAt: at(5), now: at(5) });
        expect(fresh.changes).toEqual([{ id: 'x', kind: 'revive' }]);
        await store.write(k, { deletes: ['x'], now: at(6) });
        // A record edited upstream (newer than the row) but fetched before the delete does not revive it either:
        // the page predates the delete, whatever its record's updatedAt.
        const edited = await store.write(k, { upserts: [{ ...x, updatedAt: at(7) }], fetchedAt: at(5, 12) });
        expect(counts(edited)).toEqual({ ...none, unchanged: 1 });
        expect(await store.liveIds(k)).toEqual(new Set());
        // Fetched after the delete, the newer record revives it.
        const newer = await store.write(k, { upserts: [{ ...x, updatedAt: at(7) }], fetchedAt: at(6, 1) });
        expect(counts(newer)).toEqual({ ...none, revived: 1 });
      });

      it('stores a record whose strings hold NUL, each U+0000 as U+FFFD in doc and columns, alike on every engine', async () => {
        const k = key('forms');
        const odd = { id: 'f-nul', updatedAt: at(1), title: 'a\u0000b', confirmationType: 'message', 'k\u0000': 'v' };
        const fine = { id: 'f-ok', updatedAt: at(1), title: 'plain \\u0000 text' };
        const r = await store.write(k, { upserts: [odd, fine] });
        expect(counts(r)).toEqual({ ...none, inserted: 2 });
        const rows = await mirror.query('SELECT id, title, doc FROM forms ORDER BY id');
        expect(rows).toEqual([
          {
            id: 'f-nul',
            title: 'a\ufffdb',
            doc: { id: 'f-nul', updatedAt: at(1), title: 'a\ufffdb', confirmationType: 'message', 'k\ufffd': 'v' },
          },
          // A backslash followed by "u0000" is text, not a NUL: kept as it is.
          { id: 'f-ok', title: 'plain \\u0000 text', doc: fine },
        ]);
        // The same record again is unchanged (compared as stored), and an edit of it still wins.
        expect(counts(await store.write(k, { upserts: [odd] }))).toEqual({ ...none, unchanged: 1 });
        const later = await store.write(k, { upserts: [{ ...odd, updatedAt: at(2), title: 'a\u0000c' }] });
        expect(later.changes).toEqual([{ id: 'f-nul', kind: 'update' }]);
      });
    });

    describe('write: the end of a full pass', () => {
      it('tombstones rows the run did not see: unpublished ones with that reason, the rest deleted; a later record revives them', async () => {
        const k = key('series');
        const docs = ['a', 'b', 'c', 'd'].map((id) => ({ id, updatedAt: at(1) }));
        await store.write(k, { upserts: docs, seenBy: 'run-1', now: at(1, 1) });
        // run-2 starts on day 2 and sees a and c, unchanged: they are still marked seen.
        const seen = await store.write(k, { upserts: [docs[0]!, docs[2]!], seenBy: 'run-2', now: at(2, 1) });
        expect(counts(seen)).toEqual({ ...none, unchanged: 2 });
        expect(await store.unseenIds(k, 'run-2', at(2))).toEqual(['b', 'd']);
        const done = { ...blank, lastSuccessAt: at(3) };
        // d exists upstream as a draft only (unpublished); c is named too but was seen, so it stays live.
        const end = await store.write(k, {
          tombstoneUnseen: { runId: 'run-2', startedAt: at(2), unpublished: ['d', 'c'] },
          next: done,
          now: at(3),
        });
        expect(end.changes).toEqual([
          { id: 'd', kind: 'delete' },
          { id: 'b', kind: 'delete' },
        ]);
        expect(await store.getSyncState(k)).toEqual(done);
        expect([...(await store.liveIds(k))].sort()).toEqual(['a', 'c']);
        expect(await mirror.query('SELECT id, deleted_at, deleted_reason FROM series ORDER BY id')).toEqual([
          { id: 'a', deleted_at: null, deleted_reason: null },
          { id: 'b', deleted_at: at(3), deleted_reason: 'deleted' },
          { id: 'c', deleted_at: null, deleted_reason: null },
          { id: 'd', deleted_at: at(3), deleted_reason: 'unpublished' },
        ]);
        const back = await store.write(k, { upserts: [docs[1]!, docs[3]!], fetchedAt: at(4) });
        expect(back.changes).toEqual([
          { id: 'b', kind: 'revive' },
          { id: 'd', kind: 'revive' },
        ]);
        // A revived row is live again, with no reason left behind.
        expect(await mirror.query('SELECT count(*) AS n FROM series WHERE deleted_reason IS NOT NULL')).toEqual([
          { n: 0 },
        ]);
      });

      it('never tombstones a row written after the pass started (a write-through create or edit)', async () => {
        const k = key('forms');
        await store.write(k, { upserts: [{ id: 'old', updatedAt: at(1) }], now: at(1) });
        await store.write(k, { upserts: [{ id: 'edited', updatedAt: at(1) }], now: at(1) });
        // The pass starts on day 2; during it, a write-through creates one record and edits another.
        await store.write(k, { upserts: [{ id: 'created', updatedAt: at(2, 5) }], now: at(2, 5) });
        await store.write(k, { upserts: [{ id: 'edited', updatedAt: at(2, 6) }], now: at(2, 6) });
        const end = await store.write(k, {
          tombstoneUnseen: { runId: 'run-1', startedAt: at(2), unpublished: [] },
          now: at(3),
        });
        expect(end.changes).toEqual([{ id: 'old', kind: 'delete' }]);
        expect([...(await store.liveIds(k))].sort()).toEqual(['created', 'edited']);
      });

      it('only touches its own tenant and variant', async () => {
        await store.write(key('series'), { upserts: [{ id: 'a', updatedAt: at(1) }], now: at(1) });
        await store.write({ ...key('series'), tenant: tenantSlug('other') }, { upserts: [{ id: 'a' }], now: at(1) });
        await store.write(key('series', 'draft'), { upserts: [{ id: 'a' }], now: at(1) });
        const end = await store.write(key('series'), {
          tombstoneUnseen: { runId: 'run-x', startedAt: at(2), unpublished: [] },
        });
        expect(end.deleted).toBe(1);
        expect(await mirror.query('SELECT tenant FROM series WHERE deleted_at IS NULL')).toEqual([{ tenant: 'other' }]);
        expect(await mirror.query('SELECT count(*) AS n FROM doc_variants WHERE deleted_at IS NULL')).toEqual([
          { n: 1 },
        ]);
      });
    });

    describe('leases and fencing', () => {
      it('one holder at a time; a released or expired lease is taken with a new token', async () => {
        const a = await store.acquireLease(T, 'series', 'run-a', 60_000);
        expect(a).toMatchObject({ holder: 'run-a', token: 1 });
        expect(await store.acquireLease(T, 'series', 'run-b', 60_000)).toBeNull();
        // Another collection and another tenant are free.
        expect(await store.acquireLease(T, 'events', 'run-b', 60_000)).not.toBeNull();
        expect(await store.acquireLease(tenantSlug('other'), 'series', 'run-b', 60_000)).not.toBeNull();
        expect(await store.renewLease(a!)).toBe(true);
        await store.releaseLease(a!);
        const b = await store.acquireLease(T, 'series', 'run-b', 1);
        expect(b?.token).toBe(2);
        clock.advance(5);
        const c = await store.acquireLease(T, 'series', 'run-c', 60_000);
        expect(c?.token).toBe(3);
        expect(await store.renewLease(b!)).toBe(false);
      });

      it('a write fenced by a lost lease commits nothing, rows or state, and says so', async () => {
        const k = key('series');
        const a = await store.acquireLease(T, 'series', 'run-a', 1);
        await store.write(k, { upserts: [{ id: 's', updatedAt: at(1) }], next: blank, fence: a! });
        clock.advance(5);
        const b = await (await another()).acquireLease(T, 'series', 'run-b', 60_000);
        expect(b?.token).toBe(2);
        const state: SyncState = { ...blank, full: { runId: 'run-a', startedAt: at(1), after: null } };
        await expect(
          store.write(k, { upserts: [{ id: 't', updatedAt: at(2) }], next: state, fence: a! }),
        ).rejects.toMatchObject({ code: 'US_LEASE_LOST' });
        expect(await store.liveIds(k)).toEqual(new Set(['s']));
        expect(await store.getSyncState(k)).toEqual(blank);
        expect(counts(await store.write(k, { upserts: [{ id: 't', updatedAt: at(2) }], fence: b! }))).toEqual({
          ...none,
          inserted: 1,
        });
      });
    });

    describe('two writers at once', () => {
      it('newer wins whatever order two connections commit in; nothing is lost or doubled', async () => {
        const k = key('event-instances');
        const second = await another();
        const ids = Array.from({ length: 300 }, (_, i) => `ei-${i}`);
        const older = ids.map((id) => makeInstance({ id, updatedAt: at(1), event: 'old' }));
        const newer = ids.map((id) => makeInstance({ id, updatedAt: at(2), event: 'new' }));
        for (let round = 0; round < 3; round++) {
          // Interleave pages of the older and the newer version from two connections.
          await Promise.all([
            (async () => {
              for (let i = 0; i < ids.length; i += 50) await store.write(k, { upserts: older.slice(i, i + 50) });
            })(),
            (async () => {
              for (let i = ids.length - 50; i >= 0; i -= 50) await second.write(k, { upserts: newer.slice(i, i + 50) });
            })(),
          ]);
        }
        expect(await mirror.query("SELECT count(*) AS n FROM event_instances WHERE event_id = 'new'")).toEqual([
          { n: 300 },
        ]);
        expect(await mirror.query('SELECT count(*) AS n FROM event_instances')).toEqual([{ n: 300 }]);
      });
    });

    describe('reads', () => {
      it('answer alike for published rows and for a variant, each within its own rows', async () => {
        const docs = [1, 2, 3].map((d) => ({ id: `e${d}`, updatedAt: at(d), title: `E${d}` }));
        const other = { tenant: tenantSlug('other'), collection: 'events', variant: 'draft' } as const;
        await store.write(other, { upserts: docs, seenBy: 'run-x' });
        for (const k of [key('events'), key('events', 'draft'), key('events', 'locale:fr')]) {
          await store.write(k, { upserts: docs, seenBy: 'run-1', now: at(4) });
          await store.write(k, { upserts: docs.slice(0, 1), seenBy: 'run-2', now: at(6) });
          expect(await store.unseenIds(k, 'run-2', at(5))).toEqual(['e2', 'e3']);
          expect(await store.countUpdatedBetween(k, at(2), at(3))).toBe(2);
          expect(await store.versionsUpdatedBetween(k, at(2), at(3))).toEqual([
            { id: 'e2', updatedAt: at(2) },
            { id: 'e3', updatedAt: at(3) },
          ]);
          const scanned: unknown[] = [];
          await store.scanDocs(k, (d) => scanned.push(d.id));
          expect(scanned).toEqual(['e1', 'e2', 'e3']);
        }
        expect([...(await store.liveIds(other))].sort()).toEqual(['e1', 'e2', 'e3']);
      });

      it('scanDocs streams every live doc', async () => {
        const k = key('venues');
        const docs = Array.from({ length: 1203 }, (_, i) => ({ id: `v${String(i).padStart(5, '0')}`, city: 'Oslo' }));
        await store.write(k, { upserts: docs });
        await store.write(k, { deletes: ['v00007'] });
        const seen: string[] = [];
        await store.scanDocs(k, (d) => seen.push(String(d.id)));
        expect(seen).toHaveLength(1202);
        expect(seen).not.toContain('v00007');
      });

      it('saves and reads theme schemas', async () => {
        expect(await store.getThemeSchema(T, 'events')).toBeNull();
        await store.saveThemeSchema(T, 'events', { collection: 'events', fields: [] }, at(1));
        await store.saveThemeSchema(T, 'events', { collection: 'events', fields: [{ key: 'x' }] }, at(2));
        expect(await store.getThemeSchema(T, 'events')).toEqual({ collection: 'events', fields: [{ key: 'x' }] });
      });

      it('records runs and reports mirror status', async () => {
        await store.write(key('series'), {
          upserts: [{ id: 'a' }, { id: 'b' }, { id: 'c' }],
          next: { ...blank, lastSuccessAt: at(1) },
        });
        await store.write(key('series'), { deletes: ['b'] });
        await store.write(key('events'), {
          next: { ...blank, lastError: 'US_UPSTREAM_UNAVAILABLE', lastErrorAt: at(2), lastErrorVariant: PUBLISHED },
        });
        await store.recordRun({
          runId: 'r1',
          tenant: T,
          collection: 'series',
          variant: PUBLISHED,
          mode: 'full',
          startedAt: at(1),
          finishedAt: at(1, 1),
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
        expect(await mirror.query('SELECT run_id, collection, fetched, ms FROM sync_runs')).toEqual([
          { run_id: 'r1', collection: 'series', fetched: 3, ms: 12 },
        ]);
        expect(await store.mirrorStatus()).toEqual([
          {
            tenant: 'acme',
            collection: 'series',
            live: 2,
            deleted: 1,
            lastSuccessAt: at(1),
            lastError: null,
            lastErrorAt: null,
            freshSince: null,
            watch: null,
          },
          {
            tenant: 'acme',
            collection: 'events',
            live: 0,
            deleted: 0,
            lastSuccessAt: null,
            lastError: 'US_UPSTREAM_UNAVAILABLE',
            lastErrorAt: at(2),
            freshSince: null,
            watch: null,
          },
        ]);
      });

      it('closes idempotently, and a store opened again sees the data', async () => {
        await store.write(key('series'), { upserts: [{ id: 's1', updatedAt: at(1) }] });
        await store.close();
        await store.close();
        store = await mirror.open(clock);
        expect(await store.liveIds(key('series'))).toEqual(new Set(['s1']));
      });
    });
  });
}
