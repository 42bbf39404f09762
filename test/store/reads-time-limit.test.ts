import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it, onTestFinished } from 'vitest';
import { answerRead } from '../../src/reads/answer-read.js';
import { dialectFor } from '../../src/store/dialect.js';
import { openMirror } from '../../src/store/open-mirror.js';
import { type MirrorReads, openMirrorReads } from '../../src/store/reads/mirror-reads.js';
import { BLANK_SYNC_STATE, PUBLISHED } from '../../src/sync/store-port.js';
import { tenantSlug } from '../../src/vocabulary/ids.js';
import { testDatabase } from '../helpers/postgres.js';

const T = tenantSlug('acme');
const key = { tenant: T, collection: 'events' as const, variant: PUBLISHED };

/** A SQLite mirror holding three events, their collection synced once. */
async function sqliteMirror(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'understudy-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'mirror.db');
  const { store } = await openMirror(path);
  const docs = [1, 2, 3].map((i) => ({
    id: `ev-${i}`,
    createdAt: `2026-01-0${i}T00:00:00.000Z`,
    updatedAt: `2026-01-0${i}T00:00:00.000Z`,
    title: `Event ${i}`,
  }));
  await store.write(key, { upserts: docs, next: { ...BLANK_SYNC_STATE, lastSuccessAt: '2026-01-04T00:00:00.000Z' } });
  await store.close();
  return path;
}

describe('a read statement past api.queryTimeoutMs', () => {
  it('is stopped on SQLite by the check it makes on every row, as US_TIMEOUT', async () => {
    const reads = await openMirrorReads(await sqliteMirror(), { timeoutMs: -1 });
    onTestFinished(() => reads.close());
    const view = {
      tenant: T,
      collection: 'events' as const,
      variant: PUBLISHED,
      locale: null,
      computed: new Set<string>(),
    };
    await expect(reads.list({ view, filter: null, sort: [], offset: 0, limit: 10, count: true })).rejects.toMatchObject(
      {
        code: 'US_TIMEOUT',
      },
    );
  });

  it('is stopped by PostgreSQL itself (statement_timeout), as US_TIMEOUT', async () => {
    const url = await testDatabase();
    await (await openMirror(url)).store.close();
    const conn = await dialectFor(url).openReads({ timeoutMs: 100, connections: 1 });
    onTestFinished(() => conn.close());
    const err = await sql`select pg_sleep(2)`.execute(conn.db).catch((e: unknown) => e);
    expect(conn.failure(err)).toMatchObject({ code: 'US_TIMEOUT' });
  });

  it('answers 503 with a problem naming the limit', async () => {
    const reads = await openMirrorReads(await sqliteMirror(), { timeoutMs: -1 });
    onTestFinished(() => reads.close());
    const a = await answerRead(
      { reads: reads as MirrorReads, maxLimit: 10 },
      { tenant: T, collection: 'events', id: null, query: 'where[title][like]=event' },
    );
    expect(a.status, a.body ?? '').toBe(503);
    expect(a.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(a.body ?? '{}')).toMatchObject({ code: 'US_TIMEOUT', status: 503 });
  });
});
