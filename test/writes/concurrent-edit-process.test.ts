import { writeFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { errorsFailTheCalls } from '../../src/queue/error-listeners.js';
import { openWritesQueue } from '../../src/queue/write-queue.js';
import type { JsonObject } from '../../src/vocabulary/ids.js';
import { workerHarness } from '../app/worker-harness.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { runCli } from '../helpers/run-cli.js';
import { startWorker } from '../helpers/understudy-process.js';

// Issue 34, item 1, as reproduced: a worker process updates a published organization with a pending draft on a
// Payload-like upstream whose answers to that record's writes are slowed by a latency fault, while an editor saves a
// draft (a) after the worker read the record and before its first write lands, (b) between its writes. Before, the
// editor's text went live in (b), the draft went back to the copy the worker had read in both, and the job ended
// `ok` with no note.

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

const PENDING = 'Pending name (editor draft)';

const richText = (text: string) => ({
  richDescription: {
    root: {
      type: 'root',
      version: 1,
      children: [{ type: 'paragraph', version: 1, children: [{ type: 'text', version: 1, text }] }],
    },
  },
  richDescription_html: `<p>${text}</p>`,
});

describe('an editor saving a draft while a worker process updates the published record', () => {
  it.each([
    ['a', 'after the worker read the record, before its first write lands', 'GET?draft'],
    ['b', 'between the worker’s writes', 'PUT'],
  ])('(%s) %s: the text never goes live, the draft keeps it, the job says so', async (mode, _when, trigger) => {
    const h = await workerHarness(server.url, { updatesOntoLatest: true });
    const slug = h.tenant.slug;
    const api = (path: string, body: JsonObject) =>
      fetch(`${h.sim.url}/partners/2026-02/${slug}/${path}`, {
        method: 'PUT',
        headers: { authorization: `users API-Key ${h.tenant.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.status);
    const org = h.sim.controls.docs(slug, 'organizations').find((d) => d._status === 'published');
    const id = String(org?.id);
    expect(await api(`organizations/${id}?draft=true&depth=0`, { name: PENDING })).toBe(200);
    writeFileSync(h.configPath, JSON.stringify({ ...h.config, tenants: [{ ...h.config.tenants[0], drafts: true }] }));
    const env = h.env;
    const conn = new Redis(server.url, { maxRetriesPerRequest: null });
    const bull = openWritesQueue(conn, h.prefix, errorsFailTheCalls);
    onTestFinished(async () => {
      await bull.close();
      await conn.quit();
    });
    const worker = startWorker(h.configPath, [], env);
    onTestFinished(async () => {
      await worker.stop();
    });
    await worker.waitForLog(/write worker started/);
    // Each of the worker's writes of the record is held a while before the upstream applies it.
    h.sim.controls.injectFaults({
      kind: 'latency',
      ms: 1500,
      count: 8,
      match: { method: 'PUT', path: `organizations/${id}?depth=0` },
    });
    const t0 = Date.now();
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
      '{"type":"presenter"}',
    );
    const ofRecord = () =>
      h.sim.controls.requestLog().filter((e) => Date.parse(e.at) >= t0 && e.path.includes(`/organizations/${id}`));
    // The editor saves as soon as the worker's read of the draft (a) or its first PUT (b) has been answered.
    const isTrigger = (e: { method: string; path: string }) =>
      !e.path.includes('editor=1') &&
      (trigger === 'PUT' ? e.method === 'PUT' : e.method === 'GET' && e.path.includes('draft=true'));
    await vi.waitFor(() => expect(ofRecord().some(isTrigger)).toBe(true), { timeout: 30_000, interval: 10 });
    const marker = `EDITOR v2 (${mode})`;
    expect(await api(`organizations/${id}?draft=true&depth=0&editor=1`, richText(marker))).toBe(200);
    await vi.waitFor(async () => expect(await bull.getJobState(jobId)).toBe('completed'), {
      timeout: 60_000,
      interval: 50,
    });

    // Where the save landed: after the worker's reads and before any of its writes (a), or between its writes (b).
    const log = ofRecord();
    const savedAt = log.findIndex((e) => e.path.includes('editor=1'));
    const writesBefore = log.slice(0, savedAt).filter((e) => e.method === 'PUT').length;
    const writesAfter = log.slice(savedAt + 1).filter((e) => e.method === 'PUT').length;
    expect(writesAfter).toBeGreaterThan(0);
    expect(writesBefore).toBe(mode === 'a' ? 0 : 1);
    expect(log.slice(0, savedAt).filter((e) => e.method === 'GET').length).toBe(2);

    const published = h.sim.controls.docs(slug, 'organizations').find((d) => d.id === id);
    const draft = h.sim.controls.docs(slug, 'organizations', { draft: true }).find((d) => d.id === id);
    expect(JSON.stringify(published)).not.toContain(marker);
    expect(published).toMatchObject({ _status: 'published', type: 'presenter', name: org?.name });
    expect(JSON.stringify(draft)).toContain(marker);
    expect(draft).toMatchObject({ _status: 'draft', type: 'presenter', name: PENDING });
    const job = await bull.getJob(jobId);
    expect(job?.returnvalue).toMatchObject({ status: 'ok', note: expect.stringMatching(/^CONCURRENT_EDIT: /) });
    const show = await runCli(['writes', 'show', jobId, '--config', h.configPath, '--json'], { env });
    expect(JSON.parse(show.stdout)).toMatchObject({ state: 'ok', note: expect.stringContaining('CONCURRENT_EDIT') });
    expect(await worker.waitForLog(/concurrent edit during an update/)).toContain(id);
  });
});
