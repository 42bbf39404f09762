import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Change } from '../../src/changes/change-log-port.js';
import { type Mirror, openMirror } from '../../src/store/open-mirror.js';
import { PUBLISHED, type SyncKey } from '../../src/sync/store-port.js';
import type { CollectionSlug } from '../../src/vocabulary/collections.js';
import { type JsonObject, tenantSlug } from '../../src/vocabulary/ids.js';
import { type ManualClock, manualClock } from '../helpers/manual-clock.js';

/** A database for the change-log contract: a SQLite path or a PostgreSQL URL, and how to drop it. */
export interface ContractDatabase {
  readonly database: string;
  readonly query: (sqlText: string, params?: readonly unknown[]) => Promise<Record<string, unknown>[]>;
  drop(): Promise<void>;
}

const T = tenantSlug('acme');
const key = (collection: CollectionSlug, variant = PUBLISHED): SyncKey => ({ tenant: T, collection, variant });
const at = (day: number) => new Date(Date.UTC(2026, 0, day)).toISOString();
const doc = (id: string, day: number, over: JsonObject = {}): JsonObject => ({
  id,
  updatedAt: at(day),
  title: `t-${id}`,
  slug: id,
  ...over,
});

/**
 * What the log says the mirror holds: per key, the last change's kind and `updated_at_after`. Replaying the log
 * must give exactly the live rows of the mirror and their `updated_at`.
 */
export const replay = (log: readonly Change[]): Map<string, string | null> => {
  const live = new Map<string, string | null>();
  for (const c of log) {
    const k = `${c.tenant}/${c.collection}/${c.variant}/${c.id}`;
    if (c.kind === 'delete') live.delete(k);
    else live.set(k, c.updated_at_after);
  }
  return live;
};

/** The change log's behaviour, engine-blind: the same suite runs on SQLite and PostgreSQL. */
export function changeLogContract(engine: string, make: () => Promise<ContractDatabase>): void {
  describe(`the change log on ${engine}`, () => {
    let db: ContractDatabase;
    let mirror: Mirror;
    const opened: Mirror[] = [];
    // The mirrors of a test read one clock: a lease expires when the test moves it.
    let clock: ManualClock;
    const open = async () => {
      const m = await openMirror(db.database, clock);
      opened.push(m);
      return m;
    };
    beforeEach(async () => {
      db = await make();
      clock = manualClock();
      mirror = await open();
    });
    afterEach(async () => {
      for (const m of opened.splice(0)) await m.close();
      await db.drop();
    });
    const all = () => mirror.changes.read({});
    /** The live rows of the series table and of draft series, as replay() keys them. */
    const liveRows = async () => {
      const rows = await db.query(
        "SELECT 'published' AS variant, id, updated_at FROM series WHERE deleted_at IS NULL " +
          "UNION ALL SELECT variant, id, updated_at FROM doc_variants WHERE deleted_at IS NULL AND collection = 'series'",
      );
      return new Map(rows.map((r) => [`acme/series/${r.variant}/${r.id}`, r.updated_at as string | null]));
    };

    it('logs one row per insert, update, delete and revive, in seq order, and nothing for an unchanged record', async () => {
      const k = key('series');
      await mirror.store.write(k, { upserts: [doc('a', 1), doc('b', 1)], runId: 'run-1' });
      await mirror.store.write(k, { upserts: [doc('a', 1), doc('b', 1)], runId: 'run-2' });
      await mirror.store.write(k, { upserts: [doc('a', 2, { title: 'A2' }), doc('b', 1)], runId: 'run-3' });
      await mirror.store.write(k, { deletes: ['b'], source: 'write', runId: 'job-9', now: at(3) });
      await mirror.store.write(k, { upserts: [doc('b', 4)], runId: 'run-4' });
      const log = await all();
      expect(log.map((c) => [c.id, c.kind, c.source, c.run_id])).toEqual([
        ['a', 'insert', 'sync', 'run-1'],
        ['b', 'insert', 'sync', 'run-1'],
        ['a', 'update', 'sync', 'run-3'],
        ['b', 'delete', 'write', 'job-9'],
        ['b', 'revive', 'sync', 'run-4'],
      ]);
      expect(log.map((c) => c.seq)).toEqual([...log.map((c) => c.seq)].sort((x, y) => x - y));
      expect(new Set(log.map((c) => c.seq)).size).toBe(5);
      const [insA, , updA, delB, revB] = log;
      expect(insA).toMatchObject({
        tenant: 'acme',
        collection: 'series',
        variant: 'published',
        updated_at_before: null,
        updated_at_after: at(1),
        fields: ['id', 'slug', 'title', 'updatedAt'],
      });
      expect(updA).toMatchObject({ updated_at_before: at(1), updated_at_after: at(2), fields: ['title', 'updatedAt'] });
      expect(delB).toMatchObject({
        updated_at_before: at(1),
        updated_at_after: at(1),
        fields: [],
        at: at(3),
        reason: 'deleted',
      });
      expect(revB).toMatchObject({
        updated_at_before: at(1),
        updated_at_after: at(4),
        fields: ['updatedAt'],
        reason: null,
      });
      expect(insA?.reason).toBeNull();
      expect(updA?.reason).toBeNull();
      expect(replay(log)).toEqual(await liveRows());
      expect(await mirror.changes.lastSeq()).toBe(revB?.seq);
    });

    it('lists fields added and removed, and logs variants with their collection slug and variant', async () => {
      const k = key('series', 'draft');
      await mirror.store.write(k, { upserts: [doc('a', 1, { extra: { deep: [1] } })] });
      await mirror.store.write(k, { upserts: [{ id: 'a', updatedAt: at(2), title: 't-a', added: true, slug: 'a' }] });
      const log = await all();
      expect(log.map((c) => [c.collection, c.variant, c.kind])).toEqual([
        ['series', 'draft', 'insert'],
        ['series', 'draft', 'update'],
      ]);
      expect(log[1]?.fields).toEqual(['added', 'extra', 'updatedAt']);
      await mirror.store.write(key('event-instances'), { upserts: [doc('ei', 1)] });
      expect((await mirror.changes.read({ collections: ['event-instances'] }))[0]).toMatchObject({
        collection: 'event-instances',
        variant: 'published',
      });
    });

    it('a full pass logs its tombstones with its run and their reason, and marking rows seen logs nothing', async () => {
      const k = key('series');
      await mirror.store.write(k, { upserts: [doc('a', 1), doc('b', 1), doc('c', 1)], now: at(1) });
      const before = await mirror.changes.lastSeq();
      await mirror.store.write(k, { upserts: [doc('a', 1)], seenBy: 'full-1', runId: 'run-f', now: at(5) });
      await mirror.store.write(k, {
        tombstoneUnseen: { runId: 'full-1', startedAt: at(4), unpublished: ['c'] },
        runId: 'run-f',
        now: at(6),
      });
      const tail = await mirror.changes.read({ since: before });
      expect(tail.map((c) => [c.id, c.kind, c.reason, c.run_id])).toEqual([
        ['c', 'delete', 'unpublished', 'run-f'],
        ['b', 'delete', 'deleted', 'run-f'],
      ]);
      expect(replay(await all())).toEqual(await liveRows());
      // Published again upstream: the next read revives it, and the revive carries no reason.
      await mirror.store.write(k, { upserts: [doc('c', 7)], runId: 'run-g', now: at(7) });
      expect((await all()).at(-1)).toMatchObject({ id: 'c', kind: 'revive', reason: null, updated_at_after: at(7) });
      expect(replay(await all())).toEqual(await liveRows());
    });

    it('a write that rolls back (a lost lease, a bad record) logs nothing', async () => {
      const k = key('series');
      const lease = await mirror.store.acquireLease(T, 'series', 'run-a', 1);
      if (!lease) throw new Error('no lease');
      const other = await open();
      clock.advance(5);
      expect(await other.store.acquireLease(T, 'series', 'run-b', 60_000)).not.toBeNull();
      await expect(mirror.store.write(k, { upserts: [doc('a', 1)], fence: lease })).rejects.toMatchObject({
        code: 'US_LEASE_LOST',
      });
      await expect(mirror.store.write(k, { upserts: [doc('b', 1), { title: 'no id' }] })).rejects.toMatchObject({
        code: 'US_STORE',
      });
      expect(await all()).toEqual([]);
    });

    it('reads by since, up to, tenant, collection, kind and limit', async () => {
      await mirror.store.write(key('series'), { upserts: [doc('a', 1), doc('b', 1)] });
      await mirror.store.write(key('events'), { upserts: [doc('e', 1)] });
      await mirror.store.write(key('series'), { deletes: ['a'] });
      await mirror.store.write({ ...key('series'), tenant: tenantSlug('other') }, { upserts: [doc('z', 1)] });
      const log = await all();
      const seqs = log.map((c) => c.seq);
      const seq = (i: number) => seqs[i] ?? -1;
      expect((await mirror.changes.read({ since: seq(1) })).map((c) => c.seq)).toEqual(seqs.slice(2));
      expect((await mirror.changes.read({ since: seq(0), upTo: seq(2) })).map((c) => c.seq)).toEqual(seqs.slice(1, 3));
      expect((await mirror.changes.read({ tenants: ['other'] })).map((c) => c.id)).toEqual(['z']);
      expect((await mirror.changes.read({ collections: ['events'] })).map((c) => c.id)).toEqual(['e']);
      expect((await mirror.changes.read({ kinds: ['delete'] })).map((c) => c.id)).toEqual(['a']);
      expect((await mirror.changes.read({ limit: 2 })).map((c) => c.seq)).toEqual(seqs.slice(0, 2));
    });

    it('reads deletes by reason: alone it selects those deletes, with kinds it narrows only the deletes', async () => {
      const k = key('series');
      await mirror.store.write(k, { upserts: [doc('a', 1), doc('b', 1), doc('c', 1)], now: at(1) });
      await mirror.store.write(k, { deletes: ['a'], now: at(2) });
      await mirror.store.write(k, { upserts: [doc('b', 1)], seenBy: 'full-1', now: at(4) });
      await mirror.store.write(k, { tombstoneUnseen: { runId: 'full-1', startedAt: at(3), unpublished: ['c'] } });
      const ids = async (f: Parameters<typeof mirror.changes.read>[0]) =>
        (await mirror.changes.read(f)).map((c) => `${c.kind}:${c.id}`);
      expect(await ids({ reasons: ['unpublished'] })).toEqual(['delete:c']);
      expect(await ids({ reasons: ['deleted'] })).toEqual(['delete:a']);
      expect(await ids({ reasons: ['deleted', 'unpublished'] })).toEqual(['delete:a', 'delete:c']);
      expect(await ids({ kinds: ['insert', 'delete'], reasons: ['deleted'] })).toEqual([
        'insert:a',
        'insert:b',
        'insert:c',
        'delete:a',
      ]);
    });

    it('prunes changes older than a cutoff; seqs are never reused', async () => {
      await mirror.store.write(key('series'), { upserts: [doc('a', 1)], now: at(1) });
      await mirror.store.write(key('series'), { upserts: [doc('b', 1)], now: at(10) });
      const [first, second] = await all();
      expect(await mirror.changes.prune(at(5))).toBe(1);
      expect((await all()).map((c) => c.seq)).toEqual([second?.seq]);
      await mirror.store.write(key('series'), { upserts: [doc('c', 1)], now: at(11) });
      const last = (await all()).at(-1);
      expect(last?.seq).toBeGreaterThan(second?.seq ?? Number.POSITIVE_INFINITY);
      expect(first?.seq).toBeLessThan(second?.seq ?? 0);
    });

    it('keeps webhook endpoint positions: created at the end of the log, advanced never back, disabled and enabled', async () => {
      await mirror.store.write(key('series'), { upserts: [doc('a', 1), doc('b', 1)] });
      const end = await mirror.changes.lastSeq();
      const e = await mirror.changes.endpoint('ep1', 'acme', 'http://x/hook', at(1));
      expect(e).toMatchObject({ deliveredSeq: end, disabledAt: null });
      expect((await mirror.changes.endpoint('ep1', 'acme', 'http://x/hook', at(2))).deliveredSeq).toBe(end);
      await mirror.changes.advanceEndpoint('ep1', end + 5, at(3), true);
      await mirror.changes.advanceEndpoint('ep1', end + 2, at(4), false);
      await mirror.changes.endpointFailed('ep1', 'HTTP 500', at(4));
      await mirror.changes.disableEndpoint('ep1', 'HTTP 410 Gone', at(5));
      expect(await mirror.changes.endpoints()).toEqual([
        {
          id: 'ep1',
          tenant: 'acme',
          url: 'http://x/hook',
          deliveredSeq: end + 5,
          lastDeliveryAt: at(3),
          lastError: 'HTTP 500',
          lastErrorAt: at(4),
          disabledAt: at(5),
          disabledReason: 'HTTP 410 Gone',
        },
      ]);
      expect(await mirror.changes.enableEndpoint('ep1')).toBe(true);
      expect(await mirror.changes.enableEndpoint('nope')).toBe(false);
      expect((await mirror.changes.endpoints())[0]?.disabledAt).toBeNull();
    });

    it('counts live rows per key and keeps the latest check results', async () => {
      await mirror.store.write(key('series'), { upserts: [doc('a', 1), doc('b', 1)] });
      await mirror.store.write(key('series'), { deletes: ['a'] });
      await mirror.store.write(key('series', 'draft'), { upserts: [doc('a', 1), doc('b', 1), doc('c', 1)] });
      expect(await mirror.changes.countLive(key('series'))).toBe(1);
      expect(await mirror.changes.countLive(key('series', 'draft'))).toBe(3);
      const row = { collection: 'series' as const, variant: 'published', local: 1, upstream: 2, drift: 1 };
      const ids = { missing: 2, extra: 1, stale: 0 };
      await mirror.changes.saveChecks('acme', [{ ...row, ...ids }], at(1));
      expect(await mirror.changes.lastChecks()).toEqual([{ tenant: 'acme', ...row, ...ids, checkedAt: at(1) }]);
      const counts = { missing: null, extra: null, stale: null };
      await mirror.changes.saveChecks('acme', [{ ...row, local: 2, drift: 0, ...counts }], at(2));
      expect(await mirror.changes.lastChecks()).toEqual([
        { tenant: 'acme', ...row, local: 2, drift: 0, ...counts, checkedAt: at(2) },
      ]);
    });

    it('reads the live versions of a key by updated_at range, undated, or by id', async () => {
      const undated = (id: string) => ({ ...doc(id, 1), updatedAt: null });
      await mirror.store.write(key('media'), {
        upserts: [doc('a', 1), doc('b', 2), doc('c', 2), doc('d', 3), doc('e', 4), undated('u'), undated('v')],
      });
      await mirror.store.write(key('media'), { deletes: ['c', 'v'] });
      await mirror.store.write(key('media', 'draft'), { upserts: [doc('a', 9), undated('w')] });
      await mirror.store.write({ ...key('media'), tenant: tenantSlug('other') }, { upserts: [doc('a', 2)] });
      const versions = async (k: SyncKey, range: Parameters<typeof mirror.changes.liveVersions>[1]) =>
        (await mirror.changes.liveVersions(k, range)).sort((x, y) => (x.id < y.id ? -1 : 1));
      expect(await versions(key('media'), { from: null, before: null })).toEqual([
        { id: 'a', updatedAt: at(1) },
        { id: 'b', updatedAt: at(2) },
        { id: 'd', updatedAt: at(3) },
        { id: 'e', updatedAt: at(4) },
      ]);
      expect(await versions(key('media'), { from: at(2), before: at(4) })).toEqual([
        { id: 'b', updatedAt: at(2) },
        { id: 'd', updatedAt: at(3) },
      ]);
      expect(await versions(key('media'), { from: null, before: at(2) })).toEqual([{ id: 'a', updatedAt: at(1) }]);
      expect(await versions(key('media'), { from: at(3), before: null })).toEqual([
        { id: 'd', updatedAt: at(3) },
        { id: 'e', updatedAt: at(4) },
      ]);
      expect(await versions(key('media'), { undated: true })).toEqual([{ id: 'u', updatedAt: null }]);
      expect(await versions(key('media', 'draft'), { undated: true })).toEqual([{ id: 'w', updatedAt: null }]);
      expect(await versions(key('media', 'draft'), { from: null, before: null })).toEqual([
        { id: 'a', updatedAt: at(9) },
      ]);
      const many = [...Array.from({ length: 40_000 }, (_, i) => `x${i}`), 'c', 'e', 'u'];
      expect(await versions(key('media'), { ids: many })).toEqual([
        { id: 'e', updatedAt: at(4) },
        { id: 'u', updatedAt: null },
      ]);
      expect(await versions(key('media'), { ids: [] })).toEqual([]);
    });
  });
}
