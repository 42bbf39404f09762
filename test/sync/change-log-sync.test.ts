import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startSimulator } from '../../src/sim/start-simulator.js';
import { openMirror } from '../../src/store/open-mirror.js';
import { discoverRoutes } from '../../src/sync/discover-routes.js';
import { PUBLISHED, type Store } from '../../src/sync/store-port.js';
import { syncCollection } from '../../src/sync/sync-collection.js';
import type { SyncMode } from '../../src/sync/sync-run.js';
import { tenantSlug } from '../../src/vocabulary/ids.js';
import { applyWrite } from '../../src/writes/apply-write.js';
import { testDatabase } from '../helpers/postgres.js';
import { aroundWrites } from '../helpers/store-intercept.js';
import { silentLog, tempDir, unlimitedClient } from '../helpers/sync-harness.js';
import { replay } from '../store/change-log-contract.js';

const C = 'series';

/** A store that "crashes" (throws before its transaction begins) on the n-th page it is asked to commit. */
const crashingOnPage = (store: Store, n: number): Store => {
  let pages = 0;
  return aroundWrites(store, (batch, write) =>
    batch.upserts?.length && ++pages === n ? Promise.reject(new Error('killed')) : write(),
  );
};

async function setup(database: string) {
  const sim = await startSimulator({ port: 0, readLimit: 0, writeLimit: 0, records: 30, maxLimit: 5, tenants: 1 });
  onTestFinished(() => sim.close());
  const t = sim.tenants[0];
  if (!t) throw new Error('no tenant');
  const slug = tenantSlug(t.slug);
  const mirror = await openMirror(database);
  onTestFinished(() => mirror.close());
  const client = unlimitedClient(sim.url, t);
  const signal = new AbortController().signal;
  const routes = await discoverRoutes(client, { signal });
  const sync = (mode: SyncMode, store: Store = mirror.store) =>
    syncCollection({ client, store, log: silentLog, pageSize: 5 }, { slug }, C, mode, routes, signal);
  const log = () => mirror.changes.read({});
  /** The live rows of the collection, keyed as `replay` keys them, with their updated_at. */
  const live = async () => {
    const m = new Map<string, string | null>();
    await mirror.store.scanDocs({ tenant: slug, collection: C, variant: PUBLISHED }, (d) => {
      m.set(`${slug}/${C}/published/${String(d.id)}`, new Date(String(d.updatedAt)).toISOString());
    });
    return m;
  };
  return { sim, t, slug, mirror, client, sync, log, live };
}

function suite(engine: string, database: () => Promise<string>) {
  describe(`the change log through sync and write-throughs on ${engine}`, () => {
    it('matches the mirror through a crash-resumed full sync, edits, creates, deletes, revives and write-throughs', async () => {
      const h = await setup(await database());
      const crashed = await h.sync('full', crashingOnPage(h.mirror.store, 4));
      expect(crashed.error).toContain('killed');
      const partial = await h.log();
      expect(partial.length).toBe(15);
      const resumed = await h.sync('incremental');
      expect(resumed.error).toBeUndefined();
      // Nothing logged twice, nothing missed: one insert per live row, each from sync with its run's id.
      const first = await h.log();
      expect(first.every((c) => c.kind === 'insert' && c.source === 'sync' && c.run_id !== null)).toBe(true);
      expect(new Set(first.map((c) => c.id)).size).toBe(first.length);
      expect(replay(first)).toEqual(await h.live());
      expect(first.length).toBe(h.sim.controls.docs(h.t.slug, C).length);

      // An incremental run with nothing changed logs nothing; edits, a create and a delete log what they did.
      await h.sync('incremental');
      expect(await h.log()).toEqual(first);
      const m = h.sim.controls.mutate({ tenant: h.t.slug, collection: C, edits: 2, creates: 1, deletes: 1 });
      await h.sync('incremental');
      await h.sync('full');
      const since = first.at(-1)?.seq ?? 0;
      const next = await h.mirror.changes.read({ since });
      expect(next.map((c) => `${c.kind} ${c.id}`).sort()).toEqual(
        [
          ...m.edited.map((id) => `update ${id}`),
          ...m.created.map((id) => `insert ${id}`),
          `delete ${m.deleted[0]}`,
        ].sort(),
      );
      expect(next.filter((c) => c.kind === 'update').every((c) => c.fields.includes('title'))).toBe(true);

      // A write-through: source write, the job's id; the sync that reads it back logs nothing more.
      const target = h.sim.controls.docs(h.t.slug, C)[0];
      const deps = { client: h.client, store: h.mirror.store, log: silentLog, mirrorDrafts: false };
      const opts = { signal: new AbortController().signal, priorUnknown: false };
      await applyWrite(
        deps,
        { op: 'update', tenant: h.slug, collection: C, id: String(target?.id), body: { title: 'Written' } } as never,
        { ...opts, jobId: 'job-1' },
      );
      const afterWrite = await h.log();
      expect(afterWrite.at(-1)).toMatchObject({
        id: String(target?.id),
        kind: 'update',
        source: 'write',
        run_id: 'job-1',
      });
      expect(afterWrite.at(-1)?.fields).toContain('title');
      await h.sync('incremental');
      expect(await h.log()).toEqual(afterWrite);

      // Revive: a row tombstoned in the mirror that a later full pass finds upstream again.
      const back = h.sim.controls.docs(h.t.slug, C)[1];
      await h.mirror.store.write(
        { tenant: h.slug, collection: C, variant: PUBLISHED },
        { deletes: [String(back?.id)] },
      );
      await h.sync('full');
      const tail = (await h.log()).slice(afterWrite.length);
      expect(tail.map((c) => `${c.kind} ${c.id}`)).toEqual([`delete ${back?.id}`, `revive ${back?.id}`]);
      expect(tail[1]?.source).toBe('sync');
      expect(replay(await h.log())).toEqual(await h.live());
    });
  });
}

suite('SQLite', async () => join(tempDir(), 'mirror.db'));
suite('PostgreSQL', testDatabase);
