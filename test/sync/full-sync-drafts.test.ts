import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createMemoryRateGate } from '../../src/partners/memory-rate-gate.js';
import { startSimulator } from '../../src/sim/start-simulator.js';
import { openStore } from '../../src/store/open-mirror.js';
import { discoverRoutes } from '../../src/sync/discover-routes.js';
import { PUBLISHED } from '../../src/sync/store-port.js';
import { syncCollection } from '../../src/sync/sync-collection.js';
import { recordId, tenantSlug } from '../../src/vocabulary/ids.js';
import { startFakeUpstream } from '../helpers/fake-upstream.js';
import { testPool } from '../helpers/http-pool.js';
import { createHttpPartnersClient } from '../helpers/partners-client.js';
import { silentLog, tempDir } from '../helpers/sync-harness.js';

/**
 * The simulator behind a thin filter that leaves draft-only records out of published list reads, as Payload does
 * (and as the simulator will by default).
 */
async function hidingDrafts(simUrl: string) {
  const up = await startFakeUpstream(async (req) => {
    const url = `${simUrl}${req.path}${req.rawQuery ? `?${req.rawQuery}` : ''}`;
    const r = await fetch(url, {
      method: req.method,
      headers: { authorization: String(req.headers.authorization ?? ''), 'content-type': 'application/json' },
      ...(req.body ? { body: req.body } : {}),
    });
    const json = (await r.json()) as { docs?: { _status?: string }[]; totalDocs?: number };
    const published = req.method === 'GET' && !/(^|&)draft=true/.test(req.rawQuery) && Array.isArray(json.docs);
    if (published && json.docs) {
      const before = json.docs.length;
      json.docs = json.docs.filter((d) => d._status !== 'draft');
      if (typeof json.totalDocs === 'number') json.totalDocs -= before - json.docs.length;
    }
    return { status: r.status, json };
  });
  onTestFinished(() => up.close());
  return up;
}

describe('full sync and drafts', () => {
  it('takes a record that is only a draft out of the published mirror as unpublished, one gone as deleted; drafts stay', async () => {
    const sim = await startSimulator({ port: 0, readLimit: 0, writeLimit: 0, records: 4, tenants: 1 });
    onTestFinished(() => sim.close());
    const t = sim.tenants[0];
    if (!t) throw new Error('no tenant');
    const slug = tenantSlug(t.slug);
    const up = await hidingDrafts(sim.url);
    const db = join(tempDir(), 'mirror.db');
    const store = await openStore(db);
    onTestFinished(() => store.close());
    const client = createHttpPartnersClient({
      dispatcher: testPool(),
      baseUrl: up.url,
      tenant: slug,
      apiKey: t.key,
      gate: createMemoryRateGate({ reads: 1_000_000, writes: 1_000_000, windowMs: 1000 }),
      retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 5 },
      log: silentLog,
    });
    const draft = await client.create(
      'series',
      { title: 'Only a draft', slug: 'only-a-draft', _status: 'draft' },
      { depth: 0 },
      { signal: AbortSignal.timeout(5000) },
    );
    // As an older write-through left it: the draft in the published table, as a live row.
    await store.write({ tenant: slug, collection: 'series', variant: PUBLISHED }, { upserts: [draft] });
    const routes = await discoverRoutes(client, { signal: AbortSignal.timeout(5000) });
    const full = () =>
      syncCollection(
        { client, store, log: silentLog },
        { slug, drafts: true },
        'series',
        'full',
        routes,
        AbortSignal.timeout(10_000),
      );
    const read = <T>(q: string, ...params: unknown[]): T[] => {
      const d = new Database(db, { readonly: true });
      try {
        return d.prepare(q).all(...params) as T[];
      } finally {
        d.close();
      }
    };
    const row = (id: string) =>
      read<{ deleted_at: string | null; deleted_reason: string | null }>(
        'SELECT deleted_at, deleted_reason FROM series WHERE id = ?',
        id,
      )[0];
    const draftRow = (id: string) =>
      read<{ deleted_at: string | null }>(
        "SELECT deleted_at FROM doc_variants WHERE collection = 'series' AND variant = 'draft' AND id = ?",
        id,
      )[0];
    const report = await full();
    expect(report.error).toBeUndefined();
    expect(report.deleted).toBe(1);
    expect(report.unpublished).toBe(1);
    expect(row(String(draft.id))).toEqual({ deleted_at: expect.any(String), deleted_reason: 'unpublished' });
    // With drafts mirrored, the draft itself stays live in doc_variants.
    expect(draftRow(String(draft.id))).toEqual({ deleted_at: null });
    const logged = read<{ kind: string; reason: string | null }>(
      "SELECT kind, reason FROM changes WHERE id = ? AND variant = 'published' ORDER BY seq",
      String(draft.id),
    );
    expect(logged).toEqual([
      { kind: 'insert', reason: null },
      { kind: 'delete', reason: 'unpublished' },
    ]);
    // A record really gone upstream is marked deleted.
    const goneId = String(sim.controls.docs(slug, 'series').find((d) => String(d.id) !== String(draft.id))?.id);
    await client.delete('series', recordId(goneId), { signal: AbortSignal.timeout(5000) });
    expect(row(goneId)).toEqual({ deleted_at: null, deleted_reason: null });
    const again = await full();
    expect(again.error).toBeUndefined();
    expect(again.unpublished ?? 0).toBe(0);
    expect(row(goneId)).toEqual({ deleted_at: expect.any(String), deleted_reason: 'deleted' });
    expect(row(String(draft.id))?.deleted_reason).toBe('unpublished');
  });
});
