import { describe, expect, it } from 'vitest';
import { discoverRoutes } from '../../src/sync/discover-routes.js';
import { PUBLISHED, type Store, type WriteBatch } from '../../src/sync/store-port.js';
import { syncCollection } from '../../src/sync/sync-collection.js';
import { type CollectionSlug, tableFor } from '../../src/vocabulary/collections.js';
import type { JsonObject } from '../../src/vocabulary/ids.js';
import { aroundWrites } from '../helpers/store-intercept.js';
import { type Harness, syncHarness } from '../helpers/sync-harness.js';

const signal = () => new AbortController().signal;
const routes = (h: Harness) => discoverRoutes(h.client, { signal: signal() });

const row = (h: Harness, c: CollectionSlug, id: string) =>
  h.query<{ deleted_at: string | null }>(
    `SELECT deleted_at FROM ${tableFor(c)} WHERE tenant = ? AND id = ?`,
    h.tenant.slug,
    id,
  )[0];

/** The simulator's API as an app would call it. */
const api = async (h: Harness, method: string, path: string, body?: JsonObject) => {
  const res = await fetch(`${h.sim.url}/partners/2026-02/${h.tenant.slug}/${path}`, {
    method,
    headers: { authorization: `users API-Key ${h.tenant.key}`, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, json: (text ? JSON.parse(text) : null) as JsonObject | null };
};

/** The store, with `before` run ahead of the first write that matches `when` (a race, made to happen). */
function racing(store: Store, when: (batch: WriteBatch) => boolean, before: () => Promise<void>): Store {
  let done = false;
  return aroundWrites(store, async (batch, write) => {
    if (!done && when(batch)) {
      done = true;
      await before();
    }
    return write();
  });
}

describe('the write path under races (each was reproduced on the old store)', () => {
  it('a sync page fetched before a DELETE write-through, committed after it, does not revive the row', async () => {
    const h = await syncHarness({ routes: 'full', records: 20 });
    const r = await routes(h);
    const C = 'event-instances';
    await syncCollection(h.deps(), h.target, C, 'full', r, signal());
    const x = h.sim.controls.mutate({ tenant: h.tenant.slug, collection: C, edits: 1 }).edited[0] as string;
    await syncCollection(h.deps(), h.target, C, 'incremental', r, signal());
    // The next incremental run re-reads X in the overlap window. Its page is fetched; before it commits, X is
    // deleted upstream and the delete is written through.
    const store = racing(
      h.store,
      (b) => (b.upserts ?? []).some((d) => d.id === x),
      async () => {
        expect((await api(h, 'DELETE', `${C}/${x}`)).status).toBe(200);
        await h.store.write({ tenant: h.target.slug, collection: C, variant: PUBLISHED }, { deletes: [x] });
      },
    );
    const run = await syncCollection(h.deps({ store }), h.target, C, 'incremental', r, signal());
    expect(run.error).toBeUndefined();
    expect(row(h, C, x)?.deleted_at).not.toBeNull();
    await syncCollection(h.deps(), h.target, C, 'incremental', r, signal());
    expect(row(h, C, x)?.deleted_at, 'still deleted after one more run').not.toBeNull();
  });

  it('a page holding a record edited upstream (newer than the row), fetched before a DELETE write-through, does not revive it', async () => {
    const h = await syncHarness({ routes: 'full', records: 20 });
    const r = await routes(h);
    const C = 'event-instances';
    await syncCollection(h.deps(), h.target, C, 'full', r, signal());
    // X is edited upstream, so the next incremental page holds it newer than the mirror's row.
    const x = h.sim.controls.mutate({ tenant: h.tenant.slug, collection: C, edits: 1 }).edited[0] as string;
    const store = racing(
      h.store,
      (b) => (b.upserts ?? []).some((d) => d.id === x),
      async () => {
        expect((await api(h, 'DELETE', `${C}/${x}`)).status).toBe(200);
        const del = await h.store.write(
          { tenant: h.target.slug, collection: C, variant: PUBLISHED },
          { deletes: [x], source: 'write' },
        );
        expect(del.deleted).toBe(1);
      },
    );
    const run = await syncCollection(h.deps({ store }), h.target, C, 'incremental', r, signal());
    expect(run.error).toBeUndefined();
    expect(row(h, C, x)?.deleted_at, 'not revived by the late page').not.toBeNull();
    await syncCollection(h.deps(), h.target, C, 'incremental', r, signal());
    expect(row(h, C, x)?.deleted_at, 'still deleted after one more run').not.toBeNull();
    expect((await api(h, 'GET', `${C}/${x}`)).status).toBe(404);
    const log = h.query<{ kind: string }>(
      'SELECT kind FROM changes WHERE tenant = ? AND collection = ? AND id = ? ORDER BY seq',
      h.tenant.slug,
      C,
      x,
    );
    expect(log.at(-1)?.kind, 'the change log ends with the delete').toBe('delete');
  });

  it('a record created and written through during a full pass is not tombstoned by that pass', async () => {
    const h = await syncHarness({ routes: 'full', records: 20 });
    const r = await routes(h);
    const C = 'forms';
    await syncCollection(h.deps(), h.target, C, 'full', r, signal());
    let created = '';
    // Just before the pass's last step (tombstoning what it did not see), an app creates a form upstream and the
    // write worker writes it through.
    const store = racing(
      h.store,
      (b) => b.tombstoneUnseen !== undefined,
      async () => {
        const res = await api(h, 'POST', `${C}?depth=0`, { title: 'Created during the pass' });
        const doc = (res.json?.doc ?? res.json) as JsonObject;
        created = String(doc.id);
        await h.store.write({ tenant: h.target.slug, collection: C, variant: PUBLISHED }, { upserts: [doc] });
      },
    );
    const run = await syncCollection(h.deps({ store }), h.target, C, 'full', r, signal());
    expect(run.error).toBeUndefined();
    expect(run.deleted).toBe(0);
    expect(created).not.toBe('');
    expect(row(h, C, created)?.deleted_at).toBeNull();
  });

  it('the draft look-up pages under an upstream clamp: 30 records unpublished, each tombstoned as unpublished', async () => {
    const h = await syncHarness({ routes: 'full', records: 60, maxLimit: 20 });
    const r = await routes(h);
    const C = 'series';
    await syncCollection(h.deps(), h.target, C, 'full', r, signal());
    const ids = h
      .query<{ id: string }>(`SELECT id FROM series WHERE tenant = ? ORDER BY id LIMIT 30`, h.tenant.slug)
      .map((x) => x.id);
    expect(ids).toHaveLength(30);
    for (const id of ids) expect((await api(h, 'PATCH', `${C}/${id}`, { _status: 'draft' })).status).toBe(200);
    const run = await syncCollection(h.deps(), h.target, C, 'full', r, signal());
    expect(run.error).toBeUndefined();
    expect(run.deleted).toBe(30);
    expect(run.unpublished).toBe(30);
    const tomb = h.query<{ id: string; deleted_reason: string }>(
      'SELECT id, deleted_reason FROM series WHERE tenant = ? AND deleted_at IS NOT NULL ORDER BY id',
      h.tenant.slug,
    );
    expect(tomb).toEqual(ids.map((id) => ({ id, deleted_reason: 'unpublished' })));
    const logged = h.query<{ n: number }>(
      "SELECT count(*) AS n FROM changes WHERE collection = 'series' AND kind = 'delete' AND reason = 'unpublished'",
    );
    expect(logged[0]?.n).toBe(30);
  });
});

describe('a run that lost its lease', () => {
  it('commits nothing more and stops that collection with US_LEASE_LOST', async () => {
    const h = await syncHarness({ routes: 'full', records: 30, maxLimit: 5 });
    const r = await routes(h);
    const C = 'event-instances';
    let pages = 0;
    let takenBy: string | null = null;
    // A stalled process: its renewals do nothing, and while it waits for its 3rd page its lease expires and
    // another run takes the collection.
    const stalled = new Proxy(h.store, {
      get(target, prop) {
        if (prop === 'renewLease') return async () => true;
        const v = Reflect.get(target, prop);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const off = h.sim.controls.beforeRequest(async (req) => {
      if (!req.path.includes(C) || ++pages !== 3) return;
      h.clock.advance(120);
      const other = await h.store.acquireLease(h.target.slug, C, 'other-run', 60_000);
      takenBy = other?.holder ?? null;
    });
    const run = await syncCollection(
      h.deps({ store: stalled, leaseTtlMs: 90, pageSize: 5 }),
      h.target,
      C,
      'full',
      r,
      signal(),
    );
    off();
    expect(takenBy).toBe('other-run');
    expect(run.errorCode).toBe('US_LEASE_LOST');
    // Page 1 committed before page 3 was asked for; page 2 commits only if its commit began before the takeover
    // (it is asked for while page 2 commits). Nothing after the takeover: the mirror holds what the run counted.
    expect([5, 10]).toContain(run.fetched);
    const rows = h.query<{ n: number }>(
      'SELECT count(*) AS n FROM event_instances WHERE tenant = ? AND deleted_at IS NULL',
      h.target.slug,
    );
    expect(rows[0]?.n).toBe(run.fetched);
    const state = await h.store.getSyncState({ tenant: h.target.slug, collection: C, variant: PUBLISHED });
    expect(state.lastError).toBeNull();
  });
});
