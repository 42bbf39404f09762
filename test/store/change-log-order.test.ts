import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openMirror } from '../../src/store/open-mirror.js';
import { PUBLISHED } from '../../src/sync/store-port.js';
import { tenantSlug } from '../../src/vocabulary/ids.js';
import { pgQuery, testDatabase } from '../helpers/postgres.js';

const key = { tenant: tenantSlug('acme'), collection: 'series' as const, variant: PUBLISHED };

describe('the change log under concurrent writers on PostgreSQL', () => {
  it('never lets a reader see a seq before a smaller one that commits later', async () => {
    const url = await testDatabase();
    const mirror = await openMirror(url);
    onTestFinished(() => mirror.close());
    await mirror.store.write(key, { upserts: [{ id: 'a', updatedAt: '2026-01-01T00:00:00.000Z', title: 'A' }] });
    const start = await mirror.changes.lastSeq();

    // A writer outside the store changes a row and holds its transaction open: its change has taken a seq.
    const slow = new pg.Client({ connectionString: url });
    await slow.connect();
    onTestFinished(() => slow.end());
    const slowPid = Number((await slow.query('SELECT pg_backend_pid() AS pid')).rows[0]?.pid);
    await slow.query('BEGIN');
    await slow.query(
      `UPDATE series SET doc = '{"id":"a","updatedAt":"2026-01-02T00:00:00.000Z","title":"A2"}',
       updated_at = '2026-01-02T00:00:00.000Z', mirrored_at = '2026-01-02T00:00:00.000Z', last_change = 'update'
       WHERE id = 'a'`,
    );
    // The store's write starts after it, so it would take the next seq and, unserialised, commit first.
    const fast = mirror.store.write(key, { upserts: [{ id: 'b', updatedAt: '2026-01-01T00:00:00.000Z' }] });
    // It waits for the slow writer and nothing else: the one session of this database blocked by it (not a count
    // over the whole server, where other tests wait on locks of their own).
    await expect
      .poll(
        async () =>
          (
            await pgQuery(
              url,
              `SELECT count(*) AS n FROM pg_stat_activity
                 WHERE datname = current_database() AND wait_event_type = 'Lock' AND ? = ANY (pg_blocking_pids(pid))`,
              [slowPid],
            )
          )[0]?.n,
      )
      .toBe(1);
    expect(await mirror.changes.read({ since: start })).toEqual([]);
    await slow.query('COMMIT');
    await fast;
    const log = await mirror.changes.read({ since: start });
    expect(log.map((c) => [c.id, c.kind])).toEqual([
      ['a', 'update'],
      ['b', 'insert'],
    ]);
    expect(log[0]?.seq).toBeLessThan(log[1]?.seq ?? 0);
  });
});
