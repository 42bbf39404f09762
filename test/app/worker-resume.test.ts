import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { enqueueSync } from '../../src/app/enqueue-sync.js';
import { holdRequest } from '../helpers/hold-request.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { runCli } from '../helpers/run-cli.js';
import { workerHarness } from './worker-harness.js';

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

const C = 'event-instances';

describe('a worker killed with -9 during an incremental sync', () => {
  it('another worker resumes after the last committed page and asks for none of them again', async () => {
    const h = await workerHarness(server.url);
    const first = await runCli(['sync', '--config', h.configPath, '--collection', C, '--full'], { env: h.env });
    expect(first.code, first.stderr).toBe(0);
    const edited = h.sim.controls.mutate({ tenant: h.tenant.slug, collection: C, edits: 30 }).edited;
    h.sim.controls.reset();
    // Hold the 5th page request. The next page is fetched while the previous one commits: when request 5 arrives,
    // the pages answered before the 4th are committed for sure, and the 4th may be committing.
    const fifth = holdRequest(h.sim, 5, C);
    const a = h.worker();
    const jobId = await enqueueSync({
      redisUrl: server.url,
      prefix: h.prefix,
      tenant: h.tenant.slug,
      collections: [C],
      mode: 'incremental',
    });
    await fifth.reached;
    await a.stop('SIGKILL');
    const committed = h.sim.controls
      .requestLog()
      .filter((e) => e.path.includes(C) && e.status === 200)
      .map((e) => e.path)
      .slice(0, 3);
    expect(committed).toHaveLength(3);
    fifth.release();
    h.sim.controls.reset();

    const b = h.worker();
    await vi.waitFor(async () => expect(await h.state(jobId)).toBe('completed'), { timeout: 45_000, interval: 100 });
    const again = h.sim.controls
      .requestLog()
      .filter((e) => e.path.includes(C))
      .map((e) => e.path);
    expect(again.filter((p) => committed.includes(p))).toEqual([]);
    const job = await h.queue.getJob(jobId);
    // 3 committed pages of 5: at most the other 15 edits (and the boundary record) are fetched now.
    expect((job?.returnvalue as { fetched: number } | undefined)?.fetched).toBeLessThanOrEqual(30 - 15 + 1);
    const sql = await runCli(
      ['sql', '--db', h.db, '--json', "SELECT id, json_extract(doc, '$.updatedAt') AS u FROM event_instances"],
      { env: h.env },
    );
    const rows = new Map((JSON.parse(sql.stdout) as { id: string; u: string }[]).map((r) => [r.id, r.u]));
    for (const d of h.sim.controls.docs(h.tenant.slug, C))
      if (edited.includes(String(d.id))) expect(rows.get(String(d.id)), String(d.id)).toBe(d.updatedAt);
    expect((await b.stop()).code).toBe(0);
  });
});
