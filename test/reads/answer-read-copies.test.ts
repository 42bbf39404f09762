import { describe, expect, it, onTestFinished } from 'vitest';
import { answerRead, type ReadRequest } from '../../src/reads/answer-read.js';
import { openMirror } from '../../src/store/open-mirror.js';
import { openMirrorReads } from '../../src/store/reads/mirror-reads.js';
import { BLANK_SYNC_STATE, PUBLISHED } from '../../src/sync/store-port.js';
import { tenantSlug } from '../../src/vocabulary/ids.js';
import { ENGINES } from '../helpers/engines.js';

// A read starts from the copies it last saw where the engine cannot keep them exactly (PostgreSQL) and confirms them
// in its own statement; on SQLite they are kept while data_version holds. Either way, a sync committed by another
// connection between two reads shows in the second: its pass time, its records, a copy that appeared.

const T = tenantSlug('acme');
const at = (d: number) => `2026-01-0${d}T00:00:00.000Z`;
const page = (i: number) => ({ id: `ev-${i}`, createdAt: at(1), updatedAt: at(i), title: `Page ${i}` });
const passed = (d: number) => ({ ...BLANK_SYNC_STATE, lastSuccessAt: at(d) });
describe.each(ENGINES)('reads between syncs (%s)', (_engine, database) => {
  it('see each pass, its records and a copy that appeared, at once', async () => {
    const db = await database();
    const { store } = await openMirror(db);
    onTestFinished(() => store.close());
    const pub = { tenant: T, collection: 'pages' as const, variant: PUBLISHED };
    await store.write(pub, { upserts: [page(1)], next: passed(2) });
    const reads = await openMirrorReads(db, { timeoutMs: 2000, connections: 2 });
    onTestFinished(() => reads.close());
    const read = async (id: string | null, query = 'depth=0') => {
      const req: ReadRequest = { tenant: T, collection: 'pages', id, query };
      const a = await answerRead({ reads, maxLimit: 100 }, req);
      return { status: a.status, synced: a.headers['x-understudy-synced-at'], body: JSON.parse(a.body ?? 'null') };
    };

    expect(await read('ev-1')).toMatchObject({ status: 200, synced: at(2) });
    expect(await read(null)).toMatchObject({ status: 200, synced: at(2), body: { totalDocs: 1 } });
    expect(await read('ev-2')).toMatchObject({ status: 404 });
    expect(await read(null, 'draft=true&depth=0')).toMatchObject({ status: 503 });

    // Another connection commits a pass: a new record, a later pass time, and a draft copy.
    await store.write(pub, { upserts: [page(2)], next: passed(3) });
    await store.write({ ...pub, variant: 'draft' }, { upserts: [{ ...page(3), _status: 'draft' }], next: passed(4) });

    // First a read whose copy appeared (the copies last seen say it is missing), then the others.
    expect(await read(null, 'draft=true&depth=0')).toMatchObject({
      status: 200,
      synced: at(4),
      body: { totalDocs: 1 },
    });
    expect(await read('ev-2')).toMatchObject({ status: 200, synced: at(3), body: { id: 'ev-2' } });
    expect(await read('ev-1')).toMatchObject({ status: 200, synced: at(3) });
    expect(await read(null)).toMatchObject({ status: 200, synced: at(3), body: { totalDocs: 2 } });
    expect(await read('ev-3', 'draft=true&depth=0')).toMatchObject({ status: 200, body: { title: 'Page 3' } });

    // A pass that finds nothing new still moves the time a read reports, even for a record that is not there.
    await store.write(pub, { upserts: [], next: passed(5) });
    expect(await read('ev-9')).toMatchObject({ status: 404 });
    expect(await read('ev-1')).toMatchObject({ status: 200, synced: at(5) });
  });
});
