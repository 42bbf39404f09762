import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openMirror } from '../../src/store/open-mirror.js';
import { PUBLISHED } from '../../src/sync/store-port.js';
import type { CollectionSlug } from '../../src/vocabulary/collections.js';
import { type JsonObject, tenantSlug } from '../../src/vocabulary/ids.js';
import { testDatabase } from '../helpers/postgres.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/sync-harness.js';

// How `understudy search` orders what it finds (issue 28, item 10), as a user sees it through the built CLI
// (`npm run build` first; `npm test` does), on both engines: a production (series, event) whose title is or begins
// with the words first, then one whose title holds them as a phrase, then any other title holding every word, then
// matches in descriptions, captions and venue names only. The integer part of `rank` is that tier; within a title
// tier, the closer the title is to the words the better (an exact title first).

const doc = (id: string, fields: JsonObject): JsonObject => ({ id, updatedAt: '2026-01-01T00:00:00.000Z', ...fields });
const titled = (id: string, title: string, description: string) => doc(id, { title, description });

/** Posts and media mention the works more often than the productions' own records do: bm25 alone ranks them first. */
const RECORDS: Partial<Record<CollectionSlug, JsonObject[]>> = {
  events: [
    titled('e1', 'Coppélia', 'A ballet in three acts'),
    titled('e2', 'Coppélia (2)', 'Delibes, revived'),
    titled('e3', 'The Cherry Orchard', "Chekhov's last play"),
    titled('e4', 'The Nutcracker', 'A Christmas ballet'),
    titled('e5', 'Swan Lake', 'Often paired with Coppélia on tour: Coppélia, Coppélia, Coppélia.'),
    titled('e6', 'An Evening of Coppélia', 'Highlights'),
  ],
  series: [
    titled('s1', 'Coppélia and Friends', 'A season of ballet'),
    titled('s2', 'An orchard, a cherry and a bird', 'Plays for spring'),
    titled('s3', 'Nutcracker Nights', 'Every December'),
  ],
  posts: [
    titled('p1', 'Coppélia: behind the scenes', 'Coppélia, Coppélia, coppelia: a week with Coppélia.'),
    titled('p2', 'Rehearsal diary', 'Coppélia Coppélia Coppélia in rehearsal, Coppélia again.'),
    titled('p3', 'Behind the scenes of The Cherry Orchard', 'The Cherry Orchard. The Cherry Orchard.'),
    titled('p4', 'Season notes', 'The Cherry Orchard returns: cherry orchard, cherry orchard, cherry orchard.'),
  ],
  media: [
    doc('m1', { alt: 'Dancers', filename: 'dancers.jpg', caption: 'Coppélia, Act II: Coppélia and Coppélia' }),
    doc('m2', { alt: 'Coppélia poster', filename: 'poster.jpg', caption: 'Coppélia, Coppélia' }),
  ],
};

async function mirrorOn(engine: 'sqlite' | 'postgres'): Promise<string> {
  const database = engine === 'sqlite' ? join(tempDir(), 'm.db') : await testDatabase();
  const mirror = await openMirror(database);
  try {
    for (const [collection, upserts] of Object.entries(RECORDS))
      await mirror.store.write(
        { tenant: tenantSlug('acme'), collection: collection as CollectionSlug, variant: PUBLISHED },
        { upserts },
      );
  } finally {
    await mirror.close();
  }
  return database;
}

async function addRecords(database: string, records: Partial<Record<CollectionSlug, JsonObject[]>>): Promise<void> {
  const mirror = await openMirror(database);
  try {
    for (const [collection, upserts] of Object.entries(records))
      await mirror.store.write(
        { tenant: tenantSlug('acme'), collection: collection as CollectionSlug, variant: PUBLISHED },
        { upserts },
      );
  } finally {
    await mirror.close();
  }
}

interface Hit {
  collection: string;
  id: string;
  title: string;
  rank: number;
}
async function search(database: string, ...args: string[]): Promise<Hit[]> {
  const r = await runCli(['search', '--db', database, '--json', ...args], { env: { LOG_LEVEL: 'warn' } });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Hit[];
}

/** The hits as `collection/id`, grouped by tier (the integer part of rank), best tier first; each group sorted. */
function tiers(hits: Hit[]): Record<number, string[]> {
  const out: Record<number, string[]> = {};
  for (const h of hits) {
    const tier = Math.floor(h.rank);
    out[tier] = [...(out[tier] ?? []), `${h.collection}/${h.id}`];
  }
  for (const ids of Object.values(out)) ids.sort();
  return out;
}
/** Hits come best first: rank never rises. */
const expectBestFirst = (hits: Hit[]) =>
  expect(hits.map((h) => h.rank)).toEqual([...hits.map((h) => h.rank)].sort((a, b) => b - a));

describe.each(['sqlite', 'postgres'] as const)('search ranking on %s', (engine) => {
  it('ranks the productions titled "Coppélia" first, then other titles, then posts and captions that mention it', async () => {
    const db = await mirrorOn(engine);
    for (const words of [['coppelia'], ['Coppélia'], ['COPPELIA']]) {
      const hits = await search(db, ...words);
      expect(tiers(hits)).toEqual({
        3: ['events/e1', 'events/e2', 'series/s1'],
        2: ['events/e6'],
        1: ['media/m2', 'posts/p1'],
        0: ['events/e5', 'media/m1', 'posts/p2'],
      });
      expectBestFirst(hits);
      // The exact title first, then the shorter of the longer ones; the same order on both engines.
      expect(hits.slice(0, 6).map((h) => h.id)).toEqual(['e1', 'e2', 's1', 'e6', 'm2', 'p1']);
    }
    // The tiers hold within a narrowed search too.
    expect((await search(db, 'coppelia', '--collection', 'posts')).map((h) => h.id)).toEqual(['p1', 'p2']);
    expect(tiers(await search(db, 'coppelia', '--limit', '4'))).toEqual({
      3: ['events/e1', 'events/e2', 'series/s1'],
      2: ['events/e6'],
    });
  });

  it('shows each hit with a snippet holding a matched word, accented or not, however deep in the text (issue 37, item 14)', async () => {
    const db = await mirrorOn(engine);
    const long = `${'Why we are staging it this year, with a new cast and the orchestra in the pit. '.repeat(4)}Then Coppélia.`;
    await addRecords(db, { posts: [titled('p9', 'Why we are staging', long)] });
    for (const words of [['coppelia'], ['Coppélia'], ['cherry', 'orchard'], ['coppel*']]) {
      const r = await runCli(['search', '--db', db, '--json', '--limit', '50', ...words], {
        env: { LOG_LEVEL: 'warn' },
      });
      const hits = JSON.parse(r.stdout) as (Hit & { snippet: string })[];
      expect(hits.length, words.join(' ')).toBeGreaterThan(0);
      const wanted = words.map((w) =>
        w
          .replace('*', '')
          .normalize('NFD')
          .replace(/[\u0300-\u036f]/g, '')
          .toLowerCase(),
      );
      for (const h of hits) {
        const marked = [...h.snippet.matchAll(/\[([^\]]+)\]/g)].map((m) =>
          (m[1] ?? '')
            .normalize('NFD')
            .replace(/[\u0300-\u036f]/g, '')
            .toLowerCase(),
        );
        expect(
          marked.some((m) => wanted.some((w) => m.startsWith(w))),
          `${words.join(' ')}: ${h.id} "${h.snippet}"`,
        ).toBe(true);
      }
      if (words[0] === 'coppelia') expect(hits.find((h) => h.id === 'p9')?.snippet).toMatch(/\[Coppélia\]/);
    }
  });

  it('ranks "The Cherry Orchard" before the posts about it, for its full title or only some of its words', async () => {
    const db = await mirrorOn(engine);
    expect(tiers(await search(db, 'cherry', 'orchard'))).toEqual({
      2: ['events/e3'],
      1: ['posts/p3', 'series/s2'],
      0: ['posts/p4'],
    });
    // As the papercuts check asks: the full title, each word an operand, the top hit a production.
    const full = await search(db, '--limit', '5', '--', 'The', 'Cherry', 'Orchard');
    expect(full[0]).toMatchObject({ collection: 'events', id: 'e3', title: 'The Cherry Orchard' });
    expect(tiers(full)).toEqual({ 3: ['events/e3'], 1: ['posts/p3'], 0: ['posts/p4'] });
    expectBestFirst(full);
  });

  it('reads a trailing * as a prefix, in the title tiers too', async () => {
    const db = await mirrorOn(engine);
    expect(tiers(await search(db, 'nutcr*'))).toEqual({ 3: ['series/s3'], 2: ['events/e4'] });
    expect(tiers(await search(db, 'the', 'nutcr*'))).toEqual({ 3: ['events/e4'] });
    expect(tiers(await search(db, 'cherry', 'orch*'))).toEqual({
      2: ['events/e3'],
      1: ['posts/p3', 'series/s2'],
      0: ['posts/p4'],
    });
  });
});
