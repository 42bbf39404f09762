import { describe, expect, it, onTestFinished } from 'vitest';
import { answerRead, type ReadDeps } from '../../src/reads/answer-read.js';
import { KeptAnswers } from '../../src/reads/kept-answers.js';
import { openMirror } from '../../src/store/open-mirror.js';
import { type MirrorReads, openMirrorReads } from '../../src/store/reads/mirror-reads.js';
import { BLANK_SYNC_STATE, PUBLISHED, type Store } from '../../src/sync/store-port.js';
import { tenantSlug } from '../../src/vocabulary/ids.js';
import { ENGINES } from '../helpers/engines.js';

// serve keeps whole answers while SQLite's change mark holds: the same read again costs no statement, and a commit
// by another connection (a sync, a write) is seen by the next read. PostgreSQL has no such mark and keeps none.

const T = tenantSlug('acme');
const key = { tenant: T, collection: 'events' as const, variant: PUBLISHED };
const doc = (title: string, updatedAt: string) => ({
  id: 'ev-1',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt,
  title,
});

/** `reads` with its statements counted, and `during` run inside the next by-id statement (once). */
function counted(reads: MirrorReads) {
  const seen = { statements: 0, during: null as (() => Promise<unknown>) | null };
  const wrapped = new Proxy(reads, {
    get(target, prop) {
      const v = Reflect.get(target, prop);
      if (typeof v !== 'function') return v;
      if (prop !== 'byKey' && prop !== 'byKeys' && prop !== 'list') return v.bind(target);
      return async (...args: unknown[]) => {
        seen.statements++;
        const out = await v.apply(target, args);
        const during = seen.during;
        seen.during = null;
        if (during) await during();
        return out;
      };
    },
  });
  return { reads: wrapped, seen };
}

const write = (store: Store, title: string, at: string) =>
  store.write(key, { upserts: [doc(title, at)], next: { ...BLANK_SYNC_STATE, lastSuccessAt: at } });

describe.each(ENGINES)('answers kept between reads (%s)', (engine, database) => {
  it('answers the same read again without a statement while the mirror is unchanged, and sees a commit at once', async () => {
    const db = await database();
    const { store } = await openMirror(db);
    onTestFinished(() => store.close());
    await write(store, 'Swan Lake', '2026-01-02T00:00:00.000Z');
    const opened = await openMirrorReads(db, { timeoutMs: 2000, connections: 2 });
    onTestFinished(() => opened.close());
    const { reads, seen } = counted(opened);
    const deps: ReadDeps = { reads, maxLimit: 100, kept: new KeptAnswers() };
    const read = (ifNoneMatch?: string, query = 'depth=0') =>
      answerRead(deps, { tenant: T, collection: 'events', id: 'ev-1', query, ifNoneMatch });
    const keeps = engine === 'SQLite';

    const first = await read();
    expect(first.status).toBe(200);
    const afterFirst = seen.statements;
    // A read asked once is not kept (most never are again); asked a second time, its answer is kept…
    expect(deps.kept?.size).toBe(0);
    expect(await read()).toEqual(first);
    expect(seen.statements).toBe(2 * afterFirst);
    expect(deps.kept?.size).toBe(keeps ? 1 : 0);
    // …and given the third time without a statement.
    const again = await read();
    expect(again).toEqual(first);
    expect(seen.statements - 2 * afterFirst).toBe(keeps ? 0 : afterFirst);
    // If-None-Match is judged against the kept answer too.
    expect((await read(first.headers.etag)).status).toBe(304);

    // Another connection commits: the next read runs its statement and sees it; a read asked before is kept again
    // at its first ask after the commit.
    await write(store, 'Swan Lake (revival)', '2026-01-03T00:00:00.000Z');
    const before = seen.statements;
    const changed = await read();
    expect(JSON.parse(changed.body ?? '{}').title).toBe('Swan Lake (revival)');
    expect(seen.statements).toBeGreaterThan(before);
    expect(changed.headers.etag).not.toBe(first.headers.etag);
    expect(deps.kept?.size).toBe(keeps ? 1 : 0);
    const afterChange = seen.statements;
    expect(await read()).toEqual(changed);
    expect(seen.statements > afterChange).toBe(!keeps);

    // A commit while a read is answered: that answer is never given for the state after it; the next read asks again.
    await read(undefined, 'depth=1'); // asked once before: its next answer is kept
    seen.during = () => write(store, 'Giselle', '2026-01-04T00:00:00.000Z');
    const racing = await read(undefined, 'depth=1');
    expect(JSON.parse(racing.body ?? '{}').title).toBe('Swan Lake (revival)');
    const mid = seen.statements;
    const last = await read(undefined, 'depth=1');
    expect(JSON.parse(last.body ?? '{}').title).toBe('Giselle');
    expect(seen.statements).toBeGreaterThan(mid);
    // The first query's answer went with the mark; the second's is kept under the new one.
    expect(deps.kept?.size).toBe(keeps ? 1 : 0);
  });
});
