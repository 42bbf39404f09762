import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-mirror.js';
import { searchDrift } from '../../src/store/sqlite/search-integrity.js';
import { searchSqlite } from '../../src/store/sqlite/sqlite-search.js';
import { PUBLISHED } from '../../src/sync/store-port.js';
import type { CollectionSlug } from '../../src/vocabulary/collections.js';
import { type JsonObject, tenantSlug } from '../../src/vocabulary/ids.js';
import { tempDir } from '../helpers/sync-harness.js';

const key = (collection: CollectionSlug, tenant = 'acme') => ({
  tenant: tenantSlug(tenant),
  collection,
  variant: PUBLISHED,
});
let clock = Date.UTC(2026, 0, 1);
const stamp = () => {
  clock += 60_000;
  return new Date(clock).toISOString();
};
const event = (id: string, title: string, venue: string, more: JsonObject = {}): JsonObject => ({
  id,
  updatedAt: stamp(),
  title,
  description: 'A ballet in two acts',
  venue,
  ...more,
});
const venue = (id: string, title: string, more: JsonObject = {}): JsonObject => ({
  id,
  updatedAt: stamp(),
  title,
  city: 'London',
  ...more,
});

async function mirror() {
  const path = join(tempDir(), 'm.db');
  const store = await openStore(path);
  const put = (collection: CollectionSlug, docs: JsonObject[], more: { tenant?: string; seenBy?: string } = {}) =>
    store.write(key(collection, more.tenant), { upserts: docs, ...(more.seenBy ? { seenBy: more.seenBy } : {}) });
  const del = async (collection: CollectionSlug, id: string) =>
    (await store.write(key(collection), { deletes: [id] })).deleted;
  const ids = (text: string, opts: { tenant?: string; collection?: string } = {}) =>
    searchSqlite(path, { text, limit: 100, ...opts }).map((h) => `${h.collection}/${h.id}`);
  const drift = () => {
    const db = new Database(path);
    try {
      return searchDrift(db);
    } finally {
      db.close();
    }
  };
  return { path, store, put, del, ids, drift };
}

const clean = { missing: [], extra: [], wrong: [], ftsConsistent: true };

describe('full-text search index', () => {
  it('follows every write: insert, update, venue rename, delete, revive and a full sync tombstone', async () => {
    const { store, put, del, ids, drift } = await mirror();
    try {
      await put('venues', [venue('v1', 'Royal Hall')]);
      await put('events', [event('e1', 'Swan Lake', 'v1'), event('e2', 'Giselle', 'v9')]);
      await put('pages', [{ id: 'p1', updatedAt: stamp(), title: 'The swan song', description: 'x' }]);
      expect(ids('swan').sort()).toEqual(['events/e1', 'pages/p1']);
      expect(ids('royal hall')).toEqual(['venues/v1', 'events/e1']);
      expect(drift()).toMatchObject({ expected: 4, indexed: 4, ...clean });

      await put('events', [event('e1', 'Coppélia', 'v1')]);
      expect(ids('swan')).toEqual(['pages/p1']);
      expect(ids('coppelia')).toEqual(['events/e1']);
      await put('venues', [venue('v1', 'Opera House')]);
      expect(ids('opera')).toEqual(['venues/v1', 'events/e1']);
      expect(ids('royal')).toEqual([]);
      // The venue an event names arrives after the event: the event becomes findable by it.
      await put('venues', [venue('v9', 'Late Arrival Theatre')]);
      expect(ids('arrival')).toEqual(['venues/v9', 'events/e2']);
      expect(drift()).toMatchObject(clean);

      expect(await del('events', 'e1')).toBe(1);
      expect(ids('coppelia')).toEqual([]);
      await put('events', [event('e1', 'Coppélia', 'v1')]);
      expect(ids('coppelia')).toEqual(['events/e1']);

      await del('venues', 'v1');
      expect(ids('opera')).toEqual([]);
      expect(drift()).toMatchObject(clean);

      // A full sync that no longer sees e2 (unpublished: a draft only) tombstones it, and the index drops it in
      // the same transaction.
      const startedAt = new Date().toISOString();
      await put('events', [event('e1', 'Coppélia', 'v1')], { seenBy: 'run-1' });
      const end = await store.write(key('events'), {
        tombstoneUnseen: { runId: 'run-1', startedAt, unpublished: ['e2'] },
      });
      expect(end.deleted).toBe(1);
      expect(ids('giselle')).toEqual([]);
      expect(drift()).toMatchObject({ expected: 3, indexed: 3, ...clean });
    } finally {
      await store.close();
    }
  });

  it('narrows by tenant and collection, ranks title matches first, and reads words as words', async () => {
    const { path, store, put, ids } = await mirror();
    try {
      await put('events', [event('e1', 'Tosca', 'v1', { description: 'Puccini swan' })], { tenant: 'acme' });
      await put('events', [event('e2', 'Swan Lake', 'v1')], { tenant: 'beta' });
      await put('series', [{ id: 's1', updatedAt: stamp(), title: 'Swans and more' }], { tenant: 'beta' });
      expect(ids('swan')).toEqual(['events/e2', 'events/e1']);
      expect(ids('swan', { tenant: 'acme' })).toEqual(['events/e1']);
      expect(ids('swan*', { collection: 'series' })).toEqual(['series/s1']);
      expect(ids('SWAN lake')).toEqual(['events/e2']);
      expect(ids('swan OR tosca')).toEqual([]);
      // Quotes and operators are punctuation and words, never FTS5 syntax.
      expect(ids('"lake')).toEqual(['events/e2']);
      const [hit] = searchSqlite(path, { text: 'puccini', limit: 5 });
      expect(hit).toMatchObject({ collection: 'events', tenant: 'acme', id: 'e1', title: 'Tosca' });
      expect(hit?.snippet).toContain('[Puccini]');
      expect(hit?.rank).toBeGreaterThan(0);
      expect(() => searchSqlite(path, { text: '  ', limit: 5 })).toThrow(/at least one word/);
    } finally {
      await store.close();
    }
  });
});
