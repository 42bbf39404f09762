import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { KyselyStore } from '../src/store/kysely-store.js';
import { openMigratedEngine } from '../src/store/open-mirror.js';
import { PUBLISHED, type Store, type SyncKey } from '../src/sync/store-port.js';
import { tenantSlug } from '../src/vocabulary/ids.js';
import { makeInstances } from './ingest.js';
import { freshDatabase } from './postgres-database.js';

const RECORDS = 100_000;
const PAGE = 1000;
const KEY: SyncKey = { tenant: tenantSlug('bench'), collection: 'event-instances', variant: PUBLISHED };

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

async function ingest(store: Store, docs: readonly Record<string, unknown>[]): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < docs.length; i += PAGE)
    await store.write(KEY, { upserts: docs.slice(i, i + PAGE) as never, seenBy: 'run-1' });
  return docs.length / ((performance.now() - t0) / 1000);
}

/** The same 100,000 records through `Store.write` into SQLite and into PostgreSQL, in one run. */
export default async function bench(): Promise<string> {
  const docs = makeInstances(RECORDS);
  const dir = mkdtempSync(join(tmpdir(), 'understudy-bench-'));
  try {
    // Best of two rounds, alternated, each into a fresh file and a fresh database: the machine's speed drifts.
    let sqliteRate = 0;
    let pgRate = 0;
    for (let round = 0; round < 2; round++) {
      const lite = new KyselyStore(await openMigratedEngine(join(dir, `m-${round}.db`)));
      sqliteRate = Math.max(sqliteRate, await ingest(lite, docs).finally(() => lite.close()));
      const db = await freshDatabase('ingest');
      try {
        const post = new KyselyStore(await openMigratedEngine(db.url));
        pgRate = Math.max(pgRate, await ingest(post, docs).finally(() => post.close()));
      } finally {
        await db.drop();
      }
    }
    const ratio = sqliteRate / pgRate;
    return [
      '## PostgreSQL ingest',
      '',
      `${fmt(RECORDS)} simulator-shaped event instances through \`Store.write\` (one multi-row upsert per page of`,
      `${PAGE}), into a fresh SQLite file and into a fresh PostgreSQL database on this machine (jsonb documents), in`,
      'one run, best of two rounds alternated. Target: PostgreSQL within 2x of SQLite.',
      '',
      '| engine | records/s |',
      '| --- | ---: |',
      `| SQLite | ${fmt(sqliteRate)} |`,
      `| PostgreSQL | ${fmt(pgRate)} |`,
      '',
      `Result: PostgreSQL is ${ratio.toFixed(2)}x slower than SQLite: ${ratio <= 2 ? 'meets' : 'MISSES'} the target.`,
      '',
    ].join('\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
