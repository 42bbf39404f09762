import { describe, expect, it, onTestFinished } from 'vitest';
import { openMirror } from '../../src/store/open-mirror.js';
import { PUBLISHED } from '../../src/sync/store-port.js';
import { tenantSlug } from '../../src/vocabulary/ids.js';
import { pgQuery, testDatabase } from '../helpers/postgres.js';
import { runCli, spawnCli } from '../helpers/run-cli.js';

/**
 * `understudy sql` on PostgreSQL runs the user's statement in a READ ONLY transaction, which still lets it call
 * any function its role may: advisory locks (held past the transaction at session level) and sleeps among them.
 * Whatever it holds, the mirror's writers must not wait for it.
 */
const key = { tenant: tenantSlug('acme'), collection: 'series' as const, variant: PUBLISHED };
/** The key the change log's writers were once ordered by, and the key of Kysely's migration lock. */
const OLD_CHANGE_LOCK = 7_305_045_001n;
const KYSELY_MIGRATION_LOCK = 3_853_314_791_062_309_107n;

/** Advisory locks granted in this database (advisory locks are per database; other tests share the server). */
const grantedAdvisory = async (url: string): Promise<number> =>
  Number(
    (
      await pgQuery(
        url,
        `SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      )
    )[0]?.n,
  );

/** `p`, or a rejection naming `what` once `ms` have passed: a stalled writer fails the test instead of hanging it. */
const within = <T>(ms: number, what: string, p: Promise<T>): Promise<T> =>
  Promise.race([
    p,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: still waiting after ${ms} ms`)), ms)),
  ]);

describe('understudy sql on PostgreSQL and the mirror writers', () => {
  it('a statement holding advisory locks and sleeping stalls neither opening the mirror nor a write', async () => {
    const url = await testDatabase();
    const first = await openMirror(url);
    await first.store.write(key, { upserts: [{ id: 'a', updatedAt: '2026-01-01T00:00:00.000Z', title: 'A' }] });
    const start = await first.changes.lastSeq();
    await first.close();

    for (const lock of ['pg_advisory_lock', 'pg_advisory_xact_lock']) {
      const statement = `SELECT ${lock}(${OLD_CHANGE_LOCK}), ${lock}(${KYSELY_MIGRATION_LOCK}), pg_sleep(30)`;
      const sql = spawnCli(['sql', '--db', url, statement]);
      await expect.poll(() => grantedAdvisory(url), { timeout: 10_000 }).toBe(2);

      // A writer process starting now: it opens (and would migrate) the mirror, then commits a change.
      const mirror = await within(5_000, `opening the mirror while sql holds ${lock}`, openMirror(url));
      onTestFinished(() => mirror.close());
      const updatedAt = lock === 'pg_advisory_lock' ? '2026-01-02T00:00:00.000Z' : '2026-01-03T00:00:00.000Z';
      const written = await within(
        5_000,
        `a write while sql holds ${lock}`,
        mirror.store.write(key, { upserts: [{ id: 'a', updatedAt, title: updatedAt }] }),
      );
      expect(written.updated).toBe(1);
      await mirror.close();
      expect(sql.exitCode).toBeNull(); // the statement was still running, its locks held, all along
      sql.kill('SIGKILL');
    }
    const check = await openMirror(url);
    onTestFinished(() => check.close());
    expect((await check.changes.read({ since: start })).map((c) => c.kind)).toEqual(['update', 'update']);
  });

  it("refuses a statement that would lock rows (the row older builds' writers lock included)", async () => {
    const url = await testDatabase();
    await (await openMirror(url)).close();
    for (const statement of [
      'SELECT * FROM change_log_lock FOR UPDATE',
      'SELECT * FROM change_log_lock FOR KEY SHARE',
      'SELECT * FROM series FOR SHARE',
    ]) {
      const r = await runCli(['sql', '--db', url, statement]);
      expect({ statement, code: r.code, stderr: r.stderr }).toEqual({
        statement,
        code: 2,
        stderr: expect.stringMatching(/read-only transaction/),
      });
    }
    // Dynamic SQL inside a function runs read-only too (the server refuses it as it would in a stable function).
    const dynamic = await runCli([
      'sql',
      '--db',
      url,
      "SELECT query_to_xml('SELECT * FROM change_log_lock FOR UPDATE', true, false, '')",
    ]);
    expect(dynamic.code).not.toBe(0);
    expect(dynamic.stderr).toMatch(/FOR UPDATE is not allowed/);
  });
});

describe('understudy sql on PostgreSQL, a bad statement', () => {
  it('names the unknown column in one line, prefixed once (issue 37, item 10)', async () => {
    const url = await testDatabase();
    const m = await openMirror(url);
    await m.close();
    const r = await runCli(['sql', '--db', url, 'SELECT title FROM nope_table']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('understudy sql: relation "nope_table" does not exist\n');
  });
});
