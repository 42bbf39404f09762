import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openMirror } from '../../src/store/open-mirror.js';
import { PUBLISHED } from '../../src/sync/store-port.js';
import { tenantSlug } from '../../src/vocabulary/ids.js';
import { testDatabase } from '../helpers/postgres.js';

const key = { tenant: tenantSlug('acme'), collection: 'series' as const, variant: PUBLISHED };

/** A session of its own on `url`, ended when the test finishes. */
async function session(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  onTestFinished(() => c.end());
  return c;
}

/** An update of series `id` as a writer outside the store makes it: its change takes a seq at once. */
const touch = (c: pg.Client, id: string, day: number) => {
  const at = `2026-01-${String(day).padStart(2, '0')}T00:00:00.000Z`;
  return c.query(
    `UPDATE series SET doc = jsonb_build_object('id', id, 'updatedAt', $1::text, 'title', $1::text),
       updated_at = $1, mirrored_at = $1, last_change = 'update' WHERE id = $2`,
    [at, id],
  );
};

/** The seqs logged for series `id`. */
const seqsOf = async (c: pg.Client, id: string): Promise<number[]> =>
  (await c.query('SELECT seq FROM changes WHERE id = $1 ORDER BY seq', [id])).rows.map((r) => Number(r.seq));

/** A fresh mirror holding series `ids`, and the feed's end after them. */
async function mirrorOf(...ids: string[]) {
  const url = await testDatabase();
  const mirror = await openMirror(url);
  onTestFinished(() => mirror.close());
  await mirror.store.write(key, {
    upserts: ids.map((id) => ({ id, updatedAt: '2026-01-01T00:00:00.000Z', title: id })),
  });
  return { url, mirror, start: await mirror.changes.lastSeq() };
}

/** Opens a transaction that notes its floor first, as the store's writers do. */
const beginNoted = async (c: pg.Client) => {
  await c.query('BEGIN');
  await c.query('SELECT understudy_note_seq_floor()');
};

describe('the change log under writers committing in parallel on PostgreSQL', () => {
  it('lets a write commit while a smaller seq is in flight, and shows neither until the smaller has committed', async () => {
    const { url, mirror, start } = await mirrorOf('a');

    // A writer outside the store changes a row and holds its transaction open: its change has taken a seq.
    const slow = await session(url);
    await slow.query('BEGIN');
    await touch(slow, 'a', 2);
    // The store's write starts after it and takes the next seq: it commits at once, nothing waits for the other.
    const fast = await mirror.store.write(key, { upserts: [{ id: 'b', updatedAt: '2026-01-01T00:00:00.000Z' }] });
    expect(fast.inserted).toBe(1);
    const watcher = await session(url);
    expect(await seqsOf(watcher, 'b')).toEqual([start + 2]); // committed, visible to anyone reading the table

    // The feed stops before the seq still in flight: a reader moving to the last seq it saw cannot pass it.
    expect(await mirror.changes.read({ since: start })).toEqual([]);
    expect(await mirror.changes.lastSeq()).toBe(start);
    await slow.query('COMMIT');
    const log = await mirror.changes.read({ since: start });
    expect(log.map((c) => [c.seq, c.id, c.kind])).toEqual([
      [start + 1, 'a', 'update'],
      [start + 2, 'b', 'insert'],
    ]);
    expect(await mirror.changes.lastSeq()).toBe(start + 2);
  });

  it('holds back a change whose transaction is older than every one running while a smaller seq is in flight', async () => {
    // Ordering by "transaction older than the oldest still running" alone is not enough: a transaction takes its id
    // at its first write and its seqs later, so an older transaction can take a larger seq than a younger one.
    const { url, mirror, start } = await mirrorOf('a', 'b');
    const [older, younger] = [await session(url), await session(url)];
    // The older transaction notes its floor as the store's writers do, then takes its id.
    await beginNoted(older);
    await older.query('SELECT pg_current_xact_id()');
    // The younger one takes its id after, but its seq first, and stays open.
    await beginNoted(younger);
    await touch(younger, 'a', 2);
    await touch(older, 'b', 2);
    await older.query('COMMIT');
    const watcher = await session(url);
    expect(await seqsOf(watcher, 'b')).toEqual([start, start + 2]); // its insert, then this update, committed

    // Older than the oldest transaction running (the younger), committed, and still not in the feed.
    expect(await mirror.changes.read({ since: start })).toEqual([]);
    await younger.query('COMMIT');
    expect((await mirror.changes.read({ since: start })).map((c) => [c.seq, c.id])).toEqual([
      [start + 1, 'a'],
      [start + 2, 'b'],
    ]);
  });

  it('settle waits for the transactions in flight, then a one-off read sees every change committed before it', async () => {
    const { url, mirror, start } = await mirrorOf('a');
    const slow = await session(url);
    await slow.query('BEGIN');
    await touch(slow, 'a', 2);
    await mirror.store.write(key, { upserts: [{ id: 'b', updatedAt: '2026-01-01T00:00:00.000Z' }] });

    let settled: number | null = null;
    const settling = mirror.changes.settle().then((end) => {
      settled = end;
      return end;
    });
    // Several looks at the feed later, it still waits: the smaller seq has not committed.
    for (let i = 0; i < 5; i++) expect(await mirror.changes.read({ since: start })).toEqual([]);
    expect(settled).toBeNull();
    await slow.query('COMMIT');
    expect(await settling).toBe(start + 2);
    expect((await mirror.changes.read({ since: start })).map((c) => c.id)).toEqual(['a', 'b']);
  });

  it('settle does not wait for a seq that rolled back', async () => {
    const { url, mirror, start } = await mirrorOf('a');
    const gone = await session(url);
    await gone.query('BEGIN');
    await touch(gone, 'a', 2);
    await gone.query('ROLLBACK');
    await mirror.store.write(key, { upserts: [{ id: 'b', updatedAt: '2026-01-01T00:00:00.000Z' }] });
    expect(await mirror.changes.settle()).toBe(start + 2);
    expect((await mirror.changes.read({ since: start })).map((c) => [c.seq, c.id])).toEqual([[start + 2, 'b']]);
  });

  it('passes a hole no later floor covers without another writer: a reader following the feed goes on', async () => {
    const { url, mirror, start } = await mirrorOf('a', 'b');
    const [writer, gone] = [await session(url), await session(url)];
    // The writer notes its floor before the other takes a seq and rolls it back: its floor is below the hole.
    await beginNoted(writer);
    await gone.query('BEGIN');
    await touch(gone, 'a', 2);
    await touch(writer, 'b', 2);
    await gone.query('ROLLBACK');
    await writer.query('COMMIT');
    // A follower's looks: the first finds a change behind a hole and keeps a mark, a later one passes it.
    await expect
      .poll(async () => (await mirror.changes.read({ since: start })).map((c) => [c.seq, c.id]), { timeout: 10_000 })
      .toEqual([[start + 2, 'b']]);
    expect(await mirror.changes.lastSeq()).toBe(start + 2);
  });
});
