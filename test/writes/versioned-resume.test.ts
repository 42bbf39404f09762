import { writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { errorsFailTheCalls } from '../../src/queue/error-listeners.js';
import { openWritesQueue } from '../../src/queue/write-queue.js';
import type { JsonObject } from '../../src/vocabulary/ids.js';
import { workerHarness } from '../app/worker-harness.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { runCli } from '../helpers/run-cli.js';
import { startWorker } from '../helpers/understudy-process.js';
import { startDroppingProxy } from './dropping-proxy.js';

// Issue 34, item 2: a worker killed (kill -9) between the requests of an update of a published record with a pending
// draft. The retried job found no pending draft (the first write had superseded it), ended `ok` with no note, and the
// mirror's draft variant kept the draft as it was before.

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

const PENDING = 'Pending name (editor draft)';

describe('an update of a versioned record whose worker is killed between its requests', () => {
  it('is resumed by the next worker: the editor draft made the latest again, the mirror re-read, a note', async () => {
    const h = await workerHarness(
      server.url,
      { updatesOntoLatest: true },
      { lockDurationMs: 1000, stalledIntervalMs: 500 },
    );
    const slug = h.tenant.slug;
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`${h.sim.url}/partners/2026-02/${slug}/${path}`, {
        ...init,
        headers: { authorization: `users API-Key ${h.tenant.key}`, 'content-type': 'application/json' },
      }).then(async (r) => (await r.json()) as JsonObject);
    const orgs = h.sim.controls.docs(slug, 'organizations');
    const org = orgs.find((d) => d._status === 'published');
    const id = String(org?.id);
    await api(`organizations/${id}?draft=true&depth=0`, { method: 'PUT', body: JSON.stringify({ name: PENDING }) });

    // Between the worker and the simulator, a proxy that holds the answer of the update's publishing request: it is
    // applied upstream, and the worker is killed before its answer arrives, so the draft request is never sent.
    const proxy = await startDroppingProxy(h.sim.url);
    onTestFinished(() => proxy.close());
    let held: (() => void) | null = null;
    const publishing: string[] = [];
    proxy.beforeAnswer(async (method, path) => {
      if (method !== 'PUT' || !path.includes(`/organizations/${id}`) || path.includes('draft=true')) return;
      publishing.push(path);
      if (publishing.length === 1) await new Promise<void>((resolve) => (held = resolve));
    });
    const config = { ...h.config, baseUrl: proxy.url, tenants: [{ ...h.config.tenants[0], drafts: true }] };
    writeFileSync(h.configPath, JSON.stringify(config));
    const env = h.env;
    const sync = await runCli(['sync', '--config', h.configPath, '--collection', 'organizations', '--full'], { env });
    expect(sync.code, sync.stderr).toBe(0);
    const mirrorDraft = () => {
      const d = new Database(h.db, { readonly: true, fileMustExist: true });
      try {
        const row = d
          .prepare("SELECT doc FROM doc_variants WHERE collection = 'organizations' AND id = ? AND variant = 'draft'")
          .get(id) as { doc: string } | undefined;
        return row ? (JSON.parse(row.doc) as JsonObject) : null;
      } finally {
        d.close();
      }
    };
    expect(mirrorDraft()).toMatchObject({ name: PENDING, _status: 'draft' });

    const conn = new Redis(server.url, { maxRetriesPerRequest: null });
    const bull = openWritesQueue(conn, h.prefix, errorsFailTheCalls);
    onTestFinished(async () => {
      await bull.close();
      await conn.quit();
    });
    const a = startWorker(h.configPath, [], env);
    const jobId = await h.enqueue(
      '--tenant',
      slug,
      '--op',
      'update',
      '--collection',
      'organizations',
      '--id',
      id,
      '--body',
      JSON.stringify({ type: 'presenter' }),
    );
    await vi.waitFor(() => expect(held).not.toBeNull(), { timeout: 30_000, interval: 20 });
    // The publishing request landed: the editor's pending draft is superseded upstream.
    expect(h.sim.controls.docs(slug, 'organizations', { draft: true }).find((d) => d.id === id)).toMatchObject({
      _status: 'published',
      type: 'presenter',
    });
    await a.stop('SIGKILL');
    (held as (() => void) | null)?.();

    const b = startWorker(h.configPath, [], env);
    onTestFinished(async () => {
      await b.stop();
    });
    await vi.waitFor(async () => expect(await bull.getJobState(jobId)).toBe('completed'), {
      timeout: 30_000,
      interval: 50,
    });
    const job = await bull.getJob(jobId);
    expect(job?.returnvalue).toMatchObject({ status: 'ok', note: expect.stringMatching(/^RESUMED: /) });
    const published = h.sim.controls.docs(slug, 'organizations').find((d) => d.id === id);
    const draft = h.sim.controls.docs(slug, 'organizations', { draft: true }).find((d) => d.id === id);
    expect(published).toMatchObject({ _status: 'published', type: 'presenter', name: org?.name });
    expect(draft).toMatchObject({ _status: 'draft', type: 'presenter', name: PENDING });
    // The mirror's draft variant is what the upstream's draft read now answers.
    expect(mirrorDraft()).toMatchObject({ _status: 'draft', type: 'presenter', name: PENDING });
    expect(mirrorDraft()?.updatedAt).toBe(draft?.updatedAt);
  });
});
