import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { createOpsMetrics } from '../../src/ops/metrics.js';
import { discoverRoutes } from '../../src/sync/discover-routes.js';
import { PUBLISHED } from '../../src/sync/store-port.js';
import { syncCollection } from '../../src/sync/sync-collection.js';
import { syncTenant } from '../../src/sync/sync-tenant.js';
import { type CollectionSlug, tableFor } from '../../src/vocabulary/collections.js';
import { aroundWrites } from '../helpers/store-intercept.js';
import { type Harness, syncHarness } from '../helpers/sync-harness.js';

const signal = () => new AbortController().signal;
const FUTURE = '2099-01-01T00:00:00.000Z';

const routes = (h: Harness) => discoverRoutes(h.client, { signal: signal() });

/** The mirror's copy of one record, as a person with sqlite3 would read it. */
const mirrored = (h: Harness, c: CollectionSlug, id: string) =>
  h.query<{ doc: string; updated_at: string | null; deleted_at: string | null }>(
    `SELECT doc, updated_at, deleted_at FROM ${tableFor(c)} WHERE tenant = ? AND id = ?`,
    h.tenant.slug,
    id,
  )[0];

const liveCount = (h: Harness, c: CollectionSlug) =>
  h.query<{ n: number }>(
    `SELECT count(*) AS n FROM ${tableFor(c)} WHERE tenant = ? AND deleted_at IS NULL`,
    h.tenant.slug,
  )[0]?.n;

/** A logger whose lines are kept, parsed, for assertions. */
function capturedLog() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { log: createLogger({ level: 'warn', destination }), lines };
}

const key = (h: Harness, collection: CollectionSlug) => ({ tenant: h.target.slug, collection, variant: PUBLISHED });

describe('a record dated in the future', () => {
  it('does not carry the cursor past the run: edits after it are still taken incrementally', async () => {
    const h = await syncHarness({ routes: 'full', maxLimit: 5 });
    const r = await routes(h);
    await syncCollection(h.deps(), h.target, 'events', 'full', r, signal());
    const [future] = h.sim.controls.mutate({
      tenant: h.tenant.slug,
      collection: 'events',
      edits: 1,
      updatedAt: FUTURE,
    }).edited;
    const { log, lines } = capturedLog();
    const first = await syncCollection(h.deps({ log }), h.target, 'events', 'incremental', r, signal());
    expect(first.error).toBeUndefined();
    expect(first.future).toBe(1);
    expect(mirrored(h, 'events', String(future))?.updated_at).toBe(FUTURE);
    const warning = lines.find((l) => l.msg === 'records dated in the future');
    expect(warning).toMatchObject({ tenant: h.tenant.slug, collection: 'events', future: 1, ids: [future] });
    const state = await h.store.getSyncState(key(h, 'events'));
    expect(Date.parse(state.cursor?.updatedAt ?? '')).toBeLessThan(Date.parse('2098-01-01T00:00:00Z'));

    const edits = h.sim.controls.mutate({ tenant: h.tenant.slug, collection: 'events', edits: 2 }).edited;
    const second = await syncCollection(h.deps(), h.target, 'events', 'incremental', r, signal());
    expect(second.error).toBeUndefined();
    for (const id of edits) {
      const up = h.upstream('events').find((d) => d.id === id);
      expect(mirrored(h, 'events', id)?.updated_at, id).toBe(up?.updatedAt);
    }
    // Re-read cheaply: the future record is seen again (counted) on the one list page after the cursor (the
    // other request is the events theme-settings schema).
    expect(second, JSON.stringify(second)).toMatchObject({ future: 1, requests: 2 });
  });

  it('a full run repairs a cursor already past now, and an incremental run on such a cursor turns full', async () => {
    const h = await syncHarness({ routes: 'full', maxLimit: 5 });
    const r = await routes(h);
    await syncCollection(h.deps(), h.target, 'series', 'full', r, signal());
    const k = key(h, 'series');
    const broken = { ...(await h.store.getSyncState(k)), cursor: { updatedAt: FUTURE, id: 'zzz' } };
    await h.store.write(k, { next: broken });
    const edits = h.sim.controls.mutate({ tenant: h.tenant.slug, collection: 'series', edits: 2 }).edited;
    const inc = await syncCollection(h.deps(), h.target, 'series', 'incremental', r, signal());
    expect(inc.error).toBeUndefined();
    for (const id of edits) expect(mirrored(h, 'series', id)?.doc).toContain('(rev ');
    expect(Date.parse((await h.store.getSyncState(k)).cursor?.updatedAt ?? '')).toBeLessThanOrEqual(Date.now());

    await h.store.write(k, { next: broken });
    const full = await syncCollection(h.deps(), h.target, 'series', 'full', r, signal());
    expect(full.error).toBeUndefined();
    expect(Date.parse((await h.store.getSyncState(k)).cursor?.updatedAt ?? '')).toBeLessThanOrEqual(Date.now());
  });

  it('counts future-dated records in a metric by tenant and collection', async () => {
    const metrics = createOpsMetrics({ processMetrics: false });
    metrics.syncFinished({
      tenant: 't1',
      mode: 'incremental',
      report: { name: 'events', inserted: 0, updated: 1, deleted: 0, ms: 3, future: 2, undated: 1 },
    });
    const text = await metrics.text();
    expect(text).toMatch(/understudy_records_future_dated_total\{tenant="t1",collection="events"\} 2/);
    expect(text).toMatch(/understudy_records_undated_total\{tenant="t1",collection="events"\} 1/);
  });
});

describe('records with updatedAt null or not a date', () => {
  it('are mirrored by a full pass, counted, and never stop the collection; incremental runs exit clean', async () => {
    const h = await syncHarness({ routes: 'full', maxLimit: 5 });
    const r = await routes(h);
    await syncCollection(h.deps(), h.target, 'events', 'full', r, signal());
    const c = h.sim.controls;
    const [nul] = c.mutate({ tenant: h.tenant.slug, collection: 'events', edits: 1, updatedAt: null }).edited;
    const [bad] = c.mutate({
      tenant: h.tenant.slug,
      collection: 'events',
      edits: 1,
      updatedAt: 'yesterday-ish',
    }).edited;

    const inc = await syncCollection(h.deps(), h.target, 'events', 'incremental', r, signal());
    expect(inc.error).toBeUndefined();

    const full = await syncCollection(h.deps(), h.target, 'events', 'full', r, signal());
    expect(full.error).toBeUndefined();
    expect(full.undated).toBe(2);
    expect(liveCount(h, 'events')).toBe(h.upstream('events').length);
    expect(JSON.parse(mirrored(h, 'events', String(nul))?.doc ?? '{}').updatedAt).toBeNull();
    expect(JSON.parse(mirrored(h, 'events', String(bad))?.doc ?? '{}').updatedAt).toBe('yesterday-ish');

    // Compared by JSON text: the same undated record again is unchanged; an undated edit is an update.
    const again = await syncCollection(h.deps(), h.target, 'events', 'full', r, signal());
    expect(again).toMatchObject({ updated: 0, deleted: 0, undated: 2 });
    c.mutate({ tenant: h.tenant.slug, collection: 'events', edits: 3, updatedAt: null });
    const edited = await syncCollection(h.deps(), h.target, 'events', 'full', r, signal());
    expect(edited.error).toBeUndefined();
    expect(edited.updated).toBeGreaterThanOrEqual(1);
    expect(liveCount(h, 'events')).toBe(h.upstream('events').length);

    const inc2 = await syncCollection(h.deps(), h.target, 'events', 'incremental', r, signal());
    expect(inc2.error).toBeUndefined();
  });

  it('a full pass gets through more undated records than fit on one page', async () => {
    const h = await syncHarness({ routes: 'full', maxLimit: 3 });
    const r = await routes(h);
    h.sim.controls.mutate({ tenant: h.tenant.slug, collection: 'series', edits: 8, updatedAt: null });
    const full = await syncCollection(h.deps(), h.target, 'series', 'full', r, signal());
    expect(full.error).toBeUndefined();
    expect(full.undated).toBe(8);
    expect(liveCount(h, 'series')).toBe(h.upstream('series').length);
  });
});

describe('a full pass during which records are created', () => {
  it('tombstones no live undated record (creates push the records read up to the first totalDocs)', async () => {
    const h = await syncHarness({ routes: 'full', maxLimit: 5, records: 20 });
    const r = await routes(h);
    const C = 'events';
    const undated = h.sim.controls.mutate({ tenant: h.tenant.slug, collection: C, edits: 3, updatedAt: null }).edited;
    await syncCollection(h.deps({ pageSize: 5 }), h.target, C, 'full', r, signal());
    for (const id of undated) expect(mirrored(h, C, id)?.deleted_at).toBeNull();
    // The next full pass: after its first page, records are created upstream (as many as the undated ones).
    let created = false;
    const store = aroundWrites(h.store, (batch, write) => {
      if (!created && (batch.upserts?.length ?? 0) > 0) {
        created = true;
        h.sim.controls.mutate({ tenant: h.tenant.slug, collection: C, creates: 6 });
      }
      return write();
    });
    const run = await syncCollection(h.deps({ store, pageSize: 5 }), h.target, C, 'full', r, signal());
    expect(run.error).toBeUndefined();
    expect(run.deleted).toBe(0);
    for (const id of undated) expect(mirrored(h, C, id)?.deleted_at, `undated ${id}`).toBeNull();
    expect(liveCount(h, C)).toBe(h.upstream(C).length);
  });
});

describe('a page that does not move', () => {
  for (const mode of ['full', 'incremental'] as const) {
    it(`stops that collection at once with US_UPSTREAM_STUCK (${mode}), and the others go on`, async () => {
      const h = await syncHarness({ routes: 'full', maxLimit: 5 });
      if (mode === 'incremental') await syncTenant(h.deps(), h.target, 'full', signal());
      h.sim.controls.mutate({ tenant: h.tenant.slug, collection: 'event-instances', edits: 12 });
      h.sim.controls.reset();
      h.sim.controls.injectFaults({ kind: 'stale-page', count: 1000, match: { path: 'event-instances' } });
      const report = await syncTenant(h.deps(), h.target, mode, signal());
      const stuck = report.collections.find((c) => c.name === 'event-instances');
      expect(stuck?.errorCode).toBe('US_UPSTREAM_STUCK');
      expect(stuck?.error).toMatch(/\/partners\/\{version\}\/\{tenant\}\/event-instances/);
      const spent = h.sim.controls.requestLog().filter((e) => e.path.includes('event-instances'));
      expect(spent.length).toBeLessThanOrEqual(3);
      for (const c of report.collections) if (c.name !== 'event-instances') expect(c.error, c.name).toBeUndefined();
      expect(liveCount(h, 'series')).toBe(h.upstream('series').length);
    });
  }
});

describe('resuming an interrupted incremental run', () => {
  it('asks for no committed page again after a graceful stop', async () => {
    const h = await syncHarness({ routes: 'full', maxLimit: 5 });
    const r = await routes(h);
    await syncCollection(h.deps(), h.target, 'event-instances', 'full', r, signal());
    const edited = h.sim.controls.mutate({ tenant: h.tenant.slug, collection: 'event-instances', edits: 30 }).edited;
    h.sim.controls.reset();
    const upToDate = () => {
      const up = new Map(h.upstream('event-instances').map((d) => [String(d.id), d.updatedAt]));
      return edited.filter((id) => mirrored(h, 'event-instances', id)?.updated_at === up.get(id)).length;
    };
    const stop = new AbortController();
    let pages = 0;
    const first = await syncCollection(
      h.deps({
        stop: stop.signal,
        onProgress: () => {
          if (++pages === 3) stop.abort();
        },
      }),
      h.target,
      'event-instances',
      'incremental',
      r,
      signal(),
    ).catch((err: unknown) => err);
    expect((first as { code?: string }).code).toBe('US_ABORTED');
    const committed = h.sim.controls.requestLog().map((e) => e.path);
    // The page fetched ahead when the stop came is committed too: no request of the stopped run is wasted.
    expect(pages).toBeGreaterThanOrEqual(3);
    expect(committed).toHaveLength(pages);
    const taken = upToDate();
    expect(taken).toBeGreaterThan(10);
    const second = await syncCollection(h.deps(), h.target, 'event-instances', 'incremental', r, signal());
    expect(second.error).toBeUndefined();
    // Neither a committed page nor a record of one is asked for again (no overlap re-read on a resume).
    expect(second.fetched).toBe(30 - taken);
    const again = h.sim.controls
      .requestLog()
      .slice(committed.length)
      .map((e) => e.path);
    expect(again.filter((p) => committed.includes(p))).toEqual([]);
    for (const d of h.upstream('event-instances'))
      expect(mirrored(h, 'event-instances', String(d.id))?.updated_at, String(d.id)).toBe(d.updatedAt);
  });
});

describe('config sync.clockSkewMs', () => {
  it('is optional, and refused (naming the path) when negative or not an integer', async () => {
    const { parseConfig } = await import('../../src/config/load-config.js');
    const base = { baseUrl: 'http://127.0.0.1:1', tenants: [{ slug: 'a', apiKeyEnv: 'K' }] };
    expect(parseConfig({ ...base, sync: { clockSkewMs: 5000 } }).sync?.clockSkewMs).toBe(5000);
    expect(() => parseConfig({ ...base, sync: { clockSkewMs: -1 } })).toThrow(/sync\.clockSkewMs/);
    expect(() => parseConfig({ ...base, sync: { clockSkewMs: 1.5 } })).toThrow(/sync\.clockSkewMs/);
  });

  it('sets how far ahead of the run a record must be dated to count as future', async () => {
    const h = await syncHarness({ routes: 'full', maxLimit: 5 });
    const r = await routes(h);
    await syncCollection(h.deps(), h.target, 'series', 'full', r, signal());
    const soon = new Date(Date.now() + 3_600_000).toISOString();
    h.sim.controls.mutate({ tenant: h.tenant.slug, collection: 'series', edits: 1, updatedAt: soon });
    const lenient = await syncCollection(
      h.deps({ clockSkewMs: 7_200_000 }),
      h.target,
      'series',
      'incremental',
      r,
      signal(),
    );
    expect(lenient.future).toBe(0);
    const strict = await syncCollection(h.deps({ clockSkewMs: 0 }), h.target, 'series', 'incremental', r, signal());
    expect(strict.future).toBe(1);
  });
});

describe('the overlap re-read after a burst of edits', () => {
  it('is skipped when the upstream holds exactly the mirrored ids of the window, and done when it does not', async () => {
    const h = await syncHarness({ routes: 'full', maxLimit: 50, records: 40 });
    const r = await routes(h);
    // A page of 50: the 110 rows of the window do not fit in one, so proving them beats reading them again.
    const deps = () => h.deps({ pageSize: 50 });
    await syncCollection(deps(), h.target, 'event-instances', 'full', r, signal());
    h.sim.controls.mutate({ tenant: h.tenant.slug, collection: 'event-instances', edits: 110, sameUpdatedAt: true });
    const first = await syncCollection(deps(), h.target, 'event-instances', 'incremental', r, signal());
    expect(first.updated).toBe(110);
    h.sim.controls.reset();
    const second = await syncCollection(deps(), h.target, 'event-instances', 'incremental', r, signal());
    // One count of the window, one membership count per 100 ids, then the page after the cursor: none fetched.
    expect(second).toMatchObject({ fetched: 0, requests: 4 });
    const edits = h.sim.controls.mutate({ tenant: h.tenant.slug, collection: 'event-instances', edits: 2 }).edited;
    const third = await syncCollection(deps(), h.target, 'event-instances', 'incremental', r, signal());
    expect(third).toMatchObject({ updated: 2 });
    for (const id of edits) expect(mirrored(h, 'event-instances', id)?.doc).toBeTruthy();
  });

  it('mirrors late commits that re-date records already in the window (count and ids unchanged)', async () => {
    const h = await syncHarness({ routes: 'full', maxLimit: 50, records: 40 });
    const r = await routes(h);
    const deps = () => h.deps({ pageSize: 50 });
    const C = 'event-instances';
    await syncCollection(deps(), h.target, C, 'full', r, signal());
    const T0 = new Date(Date.now() - 5000).toISOString();
    const T1 = new Date(Date.parse(T0) + 900).toISOString();
    const n = h.upstream(C).length;
    h.sim.controls.mutate({ tenant: h.tenant.slug, collection: C, edits: n, updatedAt: T0 });
    h.sim.controls.mutate({ tenant: h.tenant.slug, collection: C, edits: 1, updatedAt: T1 });
    await syncCollection(deps(), h.target, C, 'incremental', r, signal());
    const cursor = (await h.store.getSyncState(key(h, C))).cursor;
    expect(cursor?.updatedAt).toBe(T1);
    // 20 records of the window commit late: re-dated to 100 ms before the cursor, still inside the window.
    const L = new Date(Date.parse(T1) - 100).toISOString();
    const late = h.sim.controls.mutate({ tenant: h.tenant.slug, collection: C, edits: 20, updatedAt: L }).edited;
    const run = await syncCollection(deps(), h.target, C, 'incremental', r, signal());
    expect(run.error).toBeUndefined();
    for (const id of late) expect(mirrored(h, C, id)?.updated_at, `late record ${id}`).toBe(L);
  });

  // The window holds 110 rows sharing the cursor's instant, so it is proved rather than re-read. Each case makes
  // two changes that leave the window's count equal: one of its records leaves it (edited to now, or deleted
  // upstream), and a record commits late into it, half a second before the cursor.
  for (const leave of ['edited out of the window', 'deleted upstream'] as const) {
    it(`mirrors a late commit into the window when a record of it was ${leave} (the counts cancel out)`, async () => {
      const h = await syncHarness({ routes: 'full', maxLimit: 50, records: 40 });
      const r = await routes(h);
      const deps = () => h.deps({ pageSize: 50 });
      const C = 'event-instances';
      await syncCollection(deps(), h.target, C, 'full', r, signal());
      const burst = h.sim.controls.mutate({ tenant: h.tenant.slug, collection: C, edits: 110, sameUpdatedAt: true });
      await syncCollection(deps(), h.target, C, 'incremental', r, signal());
      const cursor = (await h.store.getSyncState(key(h, C))).cursor;
      if (!cursor) throw new Error('no cursor');
      const moved = burst.edited[0] as string;
      const url = `${h.sim.url}/partners/2026-02/${h.tenant.slug}/${C}/${moved}`;
      const headers = { authorization: `users API-Key ${h.tenant.key}`, 'content-type': 'application/json' };
      const answer =
        leave === 'deleted upstream'
          ? await fetch(url, { method: 'DELETE', headers })
          : await fetch(url, { method: 'PATCH', headers, body: JSON.stringify({ ticketingSystemId: 'moved' }) });
      expect(answer.status).toBe(200);
      const late = new Date(Date.parse(cursor.updatedAt) - 500).toISOString();
      const created = h.sim.controls.mutate({ tenant: h.tenant.slug, collection: C, creates: 1, updatedAt: late });
      const lateId = created.created[0] as string;
      const run = await syncCollection(deps(), h.target, C, 'incremental', r, signal());
      expect(run.error).toBeUndefined();
      expect(mirrored(h, C, lateId)?.deleted_at, 'the late record is mirrored').toBeNull();
    });
  }
});
