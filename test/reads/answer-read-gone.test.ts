import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { answerRead } from '../../src/reads/answer-read.js';
import { openMirror } from '../../src/store/open-mirror.js';
import { type MirrorReads, openMirrorReads } from '../../src/store/reads/mirror-reads.js';
import type { ListSpec, ReadView } from '../../src/store/reads/read-spec.js';
import { BLANK_SYNC_STATE, PUBLISHED } from '../../src/sync/store-port.js';
import { tenantSlug } from '../../src/vocabulary/ids.js';

// A read whose client has gone starts no further statement (issue 36, item 5): a depth-1 list stops after its page
// instead of reading the related records.

const T = tenantSlug('acme');
const synced = { ...BLANK_SYNC_STATE, lastSuccessAt: '2026-01-04T00:00:00.000Z' };
const at = '2026-01-01T00:00:00.000Z';

async function mirror(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'understudy-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'mirror.db');
  const { store } = await openMirror(path);
  await store.write(
    { tenant: T, collection: 'venues', variant: PUBLISHED },
    { upserts: [{ id: 'v-1', createdAt: at, updatedAt: at, name: 'Hall' }], next: synced },
  );
  await store.write(
    { tenant: T, collection: 'events', variant: PUBLISHED },
    { upserts: [{ id: 'ev-1', createdAt: at, updatedAt: at, title: 'Event', venue: 'v-1' }], next: synced },
  );
  await store.close();
  return path;
}

describe('a read whose client goes away', () => {
  it('starts no statement after it is gone, and answers in full while it is there', async () => {
    const reads = await openMirrorReads(await mirror(), { timeoutMs: 2000 });
    onTestFinished(() => reads.close());
    let gone = false;
    const looked: string[] = [];
    // The reads themselves, but for the two statements a depth-1 list makes (the page, then the related records).
    const watched: MirrorReads = Object.assign(Object.create(reads) as MirrorReads, {
      list: async (spec: ListSpec) => {
        looked.push('list');
        const r = await reads.list(spec);
        gone = true; // the client leaves while its page is read
        return r;
      },
      byKeys: (view: ReadView, ids: readonly string[]) => {
        looked.push(`byKeys ${view.collection}`);
        return reads.byKeys(view, ids);
      },
    });
    const req = { tenant: T, collection: 'events', id: null, query: 'depth=1', gone: () => gone };
    await expect(answerRead({ reads: watched, maxLimit: 10 }, req)).rejects.toMatchObject({ code: 'US_ABORTED' });
    expect(looked).toEqual(['list']);

    gone = false;
    looked.length = 0;
    const stay = await answerRead(
      {
        reads: Object.assign(Object.create(watched) as MirrorReads, { list: (s: ListSpec) => reads.list(s) }),
        maxLimit: 10,
      },
      req,
    );
    expect(stay.status).toBe(200);
    expect(JSON.parse(stay.body ?? '{}').docs[0].venue).toMatchObject({ id: 'v-1', name: 'Hall' });
    expect(looked).toEqual(['byKeys venues']);
  });
});
