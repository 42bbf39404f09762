import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { copyMirror } from '../../src/store/copy-mirror.js';
import { openStore } from '../../src/store/open-mirror.js';
import { PUBLISHED } from '../../src/sync/store-port.js';
import { parseExactJson } from '../../src/vocabulary/exact-json.js';
import { type JsonObject, tenantSlug } from '../../src/vocabulary/ids.js';
import { pgQuery, testDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/sync-harness.js';

const T = tenantSlug('acme');

/** A small mirror with a row of every kind: records, a variant, a tombstone, a big integer, state and a run. */
async function sourceMirror(path: string): Promise<void> {
  const store = await openStore(path);
  onTestFinished(() => store.close());
  const docs = parseExactJson(
    `[{"id":9007199254740993,"updatedAt":"2026-01-01T00:00:00.000Z","title":"Big","n":12345678901234567890}]`,
  ) as JsonObject[];
  await store.write({ tenant: T, collection: 'forms', variant: PUBLISHED }, { upserts: docs });
  const series = Array.from({ length: 450 }, (_, i) => ({ id: `s${i}`, updatedAt: '2026-01-02T00:00:00.000Z' }));
  await store.write(
    { tenant: T, collection: 'series', variant: PUBLISHED },
    {
      upserts: series,
      next: {
        cursor: { updatedAt: '2026-01-02T00:00:00.000Z', id: 's9' },
        full: null,
        incremental: null,
        lastSuccessAt: '2026-01-03T00:00:00.000Z',
        lastError: null,
        lastErrorAt: null,
        lastErrorVariant: null,
      },
    },
  );
  await store.write({ tenant: T, collection: 'series', variant: PUBLISHED }, { deletes: ['s3'] });
  await store.write({ tenant: T, collection: 'pages', variant: 'draft' }, { upserts: [{ id: 'p', title: 'Draft' }] });
  await store.recordRun({
    runId: 'r1',
    tenant: T,
    collection: 'series',
    variant: PUBLISHED,
    mode: 'full',
    startedAt: 'a',
    finishedAt: 'b',
    status: 'ok',
    fetched: 450,
    inserted: 450,
    updated: 0,
    unchanged: 0,
    deleted: 0,
    requests: 1,
    ms: 5,
    error: null,
  });
  await store.close();
}

const rows = (path: string, q: string) => {
  const d = new Database(path, { readonly: true });
  try {
    return d.prepare(q).safeIntegers(true).all();
  } finally {
    d.close();
  }
};

describe('understudy store copy (copyMirror)', () => {
  it('round-trips a mirror SQLite → PostgreSQL → SQLite with equal counts and exact rows', async () => {
    const dir = tempDir();
    const a = join(dir, 'a.db');
    const b = join(dir, 'b.db');
    await sourceMirror(a);
    const pg = await testDatabase();
    const there = await copyMirror(a, pg);
    expect(there.match).toBe(true);
    expect(there.tables.find((t) => t.table === 'series')).toMatchObject({ source: 450, target: 450, copied: 450 });
    const back = await copyMirror(pg, b);
    expect(back.match).toBe(true);
    for (const q of [
      'SELECT tenant, id, updated_at, deleted_at, title FROM series ORDER BY id',
      'SELECT collection, tenant, id, variant FROM doc_variants',
      'SELECT tenant, collection, variant, cursor_id, last_success_at FROM sync_state',
      'SELECT run_id, fetched FROM sync_runs',
      'SELECT seq, tenant, collection, id, variant, kind, updated_at_after, source, at FROM changes ORDER BY seq',
    ])
      expect(rows(b, q)).toEqual(rows(a, q));
    const doc = parseExactJson(String((rows(b, 'SELECT doc FROM forms')[0] as { doc: string }).doc)) as JsonObject;
    expect(doc.id).toBe(9007199254740993n);
    expect(doc.n).toBe(12345678901234567890n);
    expect(rows(b, 'SELECT id FROM forms')).toEqual([{ id: '9007199254740993' }]);
    // The change log is the source's, not one the copy's inserts logged; new changes go on after it.
    const fields = (p: string) =>
      rows(p, 'SELECT fields FROM changes ORDER BY seq').map((r) =>
        JSON.parse(String((r as { fields: string }).fields)),
      );
    expect(fields(b)).toEqual(fields(a));
    expect(rows(b, 'SELECT count(*) AS n FROM changes')).toEqual([{ n: 453n }]);
    const copied = await openStore(b);
    await copied.write(
      { tenant: T, collection: 'forms', variant: PUBLISHED },
      { upserts: [{ id: 'new', updatedAt: '2026-02-01T00:00:00.000Z' }] },
    );
    await copied.close();
    expect(rows(b, "SELECT seq FROM changes WHERE id = 'new'")).toEqual([{ seq: 454n }]);
  });

  it("copies the change log without the source's transaction ids: every copied change has settled", async () => {
    const pg = await testDatabase();
    await sourceMirror(pg);
    const written = 'SELECT count(*) AS n FROM changes WHERE xid IS NOT NULL';
    expect(await pgQuery(pg, written)).toEqual([{ n: 453 }]);
    const other = await testDatabase();
    expect((await copyMirror(pg, other)).match).toBe(true);
    // Ids of the source's server mean nothing in the target's: copied changes carry none, and read whole.
    expect(await pgQuery(other, `${written} OR seq_floor IS NOT NULL`)).toEqual([{ n: 0 }]);
    expect(await pgQuery(other, 'SELECT understudy_settled_seq(0) AS seq')).toEqual([{ seq: 453 }]);
  });

  it('resumes an interrupted copy: run again, it completes without copying anything twice', async () => {
    const dir = tempDir();
    const a = join(dir, 'a.db');
    await sourceMirror(a);
    const pg = await testDatabase();
    const stop = new AbortController();
    await expect(
      copyMirror(a, pg, {
        signal: stop.signal,
        onTable: (t) => {
          if (t.table === 'series') stop.abort();
        },
      }),
    ).rejects.toThrow();
    const again = await copyMirror(a, pg);
    expect(again.match).toBe(true);
    expect(again.tables.find((t) => t.table === 'series')?.copied).toBe(0);
    expect(again.tables.find((t) => t.table === 'sync_state')?.copied).toBe(1);
  });
});
