import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Change } from '../../src/changes/change-log-port.js';
import { createTestDatabase, pgQuery } from '../helpers/postgres.js';
import { call, expectProblem, openStream, type RunningServe, type ServeRig, serveRig } from './serve-rig.js';

// The change feed over HTTP on both engines: GET /v1/changes is `changes --json` for the token's tenant, the stream
// resumes after Last-Event-ID over a restart of serve with nothing skipped or repeated, a position older than the
// pruned log gets 410 naming the oldest seq kept; and serve stops on SIGTERM with a stream and a wait open.
// One engine per test file (change-stream-sqlite, change-stream-postgres), so the two run side by side.

/** The change feed's tests on one engine's mirror. */
export function changeStreamContract(engine: 'sqlite' | 'postgres'): void {
  describe(`the change feed of serve (${engine} mirror)`, () => {
    let rig: ServeRig;
    let serve: RunningServe;
    let dropDatabase: (() => Promise<void>) | undefined;
    /** Runs SQL on the mirror, as an operator would (sqlite3 or psql). */
    let sql: (text: string) => Promise<Record<string, unknown>[]>;

    beforeAll(async () => {
      let database: string | undefined;
      if (engine === 'postgres') {
        const db = await createTestDatabase();
        dropDatabase = db.drop;
        database = db.url;
        sql = (text) => pgQuery(db.url, text);
      }
      rig = await serveRig(database ? { database } : {});
      if (!database)
        sql = async (text) => {
          const d = new Database(join(rig.dir, 'mirror.db'));
          try {
            const st = d.prepare(text);
            if (st.reader) return st.all() as Record<string, unknown>[];
            st.run();
            return [];
          } finally {
            d.close();
          }
        };
      serve = await rig.serve();
    });
    afterAll(async () => {
      await rig?.close();
      await dropDatabase?.();
    });

    /** `understudy changes --json …args`, parsed. */
    const cliChanges = async (...args: string[]): Promise<Change[]> => {
      const r = await rig.cli('changes', '--json', ...args);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as Change[];
    };
    /** Upstream edits of one event of each tenant, then `understudy sync` of events: returns the edited ids. */
    const editAndSync = async (): Promise<{ a: string; b: string }> => {
      const edit = (tenant: string) =>
        rig.sim.controls.mutate({ tenant, collection: 'events', edits: 1 }).edited[0] as string;
      const ids = { a: edit(rig.a), b: edit(rig.b) };
      const r = await rig.cli('sync', '--collection', 'events');
      expect(r.code, r.stderr).toBe(0);
      return ids;
    };

    it('GET /v1/changes equals `changes --json --since 0 --tenant T` for a token of tenant T only', async () => {
      const [mine, all] = await Promise.all([
        cliChanges('--since', '0', '--tenant', rig.a),
        cliChanges('--since', '0'),
      ]);
      expect(mine.length).toBeGreaterThan(0);
      expect(all.some((c) => c.tenant === rig.b)).toBe(true);
      const a = await call(`${serve.url}/v1/changes?since=0`, { token: rig.tokens.writer });
      expect(a.status, a.text).toBe(200);
      expect(a.body).toEqual(mine);
      const paged = await call(`${serve.url}/v1/changes?since=${mine[2]?.seq}&limit=3&kind=insert`, {
        token: rig.tokens.writer,
      });
      expect(paged.body).toEqual(mine.filter((c) => c.seq > (mine[2]?.seq ?? 0) && c.kind === 'insert').slice(0, 3));
      const everyone = await call(`${serve.url}/v1/changes?since=0`, { token: rig.tokens.changes });
      expect(everyone.body).toEqual(all);
    });

    it('resumes the stream after Last-Event-ID over a restart of serve: nothing skipped or repeated', async () => {
      const all = await call(`${serve.url}/v1/changes?since=0`, { token: rig.tokens.changes });
      const start = (all.body as Change[]).at(-1)?.seq ?? 0;
      const first = await openStream(serve.url, rig.tokens.writer, start);
      expect(first.status).toBe(200);
      expect(first.headers.get('content-type')).toMatch(/^text\/event-stream/);
      // An edit may touch a record edited before: its change is the one after the last event seen.
      const e1 = (await editAndSync()).a;
      await first.until((e) => e.data.id === e1);
      first.close();
      const lastId = Number(first.events.at(-1)?.id);

      // serve restarts; meanwhile, with no stream open, tenant A changes again.
      const [stopped, { a: e2 }] = await Promise.all([serve.stop(), editAndSync()]);
      expect(stopped.code, stopped.stderr).toBe(0);
      serve = await rig.serve();
      const second = await openStream(serve.url, rig.tokens.writer, lastId);
      await second.until((e) => e.data.id === e2 && e.data.seq > lastId);
      second.close();

      const want = await cliChanges('--since', String(start), '--tenant', rig.a);
      const got = [...first.events, ...second.events];
      expect(got.map((e) => Number(e.id))).toEqual(want.map((c) => c.seq));
      expect(got.map((e) => e.data)).toEqual(want);
      expect(second.events.every((e) => Number(e.id) > lastId)).toBe(true);
    });

    it('answers 410 naming the oldest seq kept when `since` or Last-Event-ID is older than the pruned log', async () => {
      const kept = await cliChanges('--since', '0');
      const cut = kept[Math.floor(kept.length / 2)]?.seq as number;
      await sql(`DELETE FROM changes WHERE seq < ${cut}`);
      const oldest = Number((await sql('SELECT min(seq) AS s FROM changes'))[0]?.s);
      expect(oldest).toBe(cut);

      const gone = await call(`${serve.url}/v1/changes?since=1`, { token: rig.tokens.writer });
      const p = expectProblem(gone, 410);
      expect(p).toMatchObject({ code: 'US_GONE', oldestSeq: oldest });
      expect(p.detail).toContain(`the oldest seq kept is ${oldest}`);
      const stream = await openStream(serve.url, rig.tokens.writer, 1);
      expect(stream.status).toBe(410);
      stream.close();
      // Right before the oldest kept is still whole.
      const edge = await call(`${serve.url}/v1/changes?since=${oldest - 1}`, { token: rig.tokens.changes });
      expect(edge.status).toBe(200);
      expect((edge.body as Change[])[0]?.seq).toBe(oldest);
    });

    it('on SIGTERM with a stream open and a Prefer: wait request in flight, answers both and exits 0 within 5 s', async () => {
      // No worker runs in this file: the write waits until serve stops, which answers it 202 (still queued).
      const stream = await openStream(serve.url, rig.tokens.writer);
      await stream.until(() => true);
      const ei = rig.eventInstanceIds(rig.a)[0] as string;
      const waiting = call(`${serve.url}/partners/2026-02/${rig.a}/event-instances/${ei}`, {
        method: 'PATCH',
        token: rig.tokens.writer,
        headers: { prefer: 'wait=30' },
        body: { booking: { bookingLinkLabel: `In flight ${engine}` } },
      });
      await expect.poll(() => rig.jobsHolding(`In flight ${engine}`), { timeout: 10_000, interval: 25 }).toBe(1);
      const t0 = performance.now();
      const r = await serve.stop('SIGTERM');
      const ms = performance.now() - t0;
      expect(r.code, r.stderr).toBe(0);
      expect(ms).toBeLessThan(5000);
      const answered = await waiting;
      expect(answered.status).toBe(202);
      expect(answered.headers.get('preference-applied')).toBeNull();
      await stream.ended;
    });
  });
}
