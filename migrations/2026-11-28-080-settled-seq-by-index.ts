import { type Kysely, sql } from 'kysely';
import { SETTLED_SEQ } from './2026-11-28-070-change-log-parallel-writers.js';
import { inTransaction, isPostgres } from './lib/engine.js';

/**
 * The same answer, read along the primary key instead of over every change after `since` (070's version read all of
 * them, and as a SQL function it was planned without knowing `since`, so it scanned the whole log: 22 ms a call at
 * 200,000 changes even for a reader at the head, 0.5 ms now; `--follow` calls it every 250 ms). PL/pgSQL with custom
 * plans, so each statement is planned with the values it runs with. Three steps, each bounded by what was written
 * recently, all in the calling statement's snapshot (the function is STABLE):
 * - `top`: walking down from the newest change, the first one that settles something by itself (no xid, or an xid
 *   older than the oldest transaction still running, with a floor). Normally the newest change itself.
 * - `base`: the greatest of those settled points, 070's rule, but only over the changes above `top`'s: a change at or
 *   below it settles nothing higher (its seq, or its floor, which is below its seq).
 * - then up from `base` along the primary key to the first seq whose next one is missing, stopping there.
 */
const BY_INDEX = `CREATE OR REPLACE FUNCTION understudy_settled_seq(since bigint) RETURNS bigint LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_custom_plan AS $fn$
DECLARE
  oldest xid8 := pg_snapshot_xmin(pg_current_snapshot());
  top bigint;
  base bigint;
BEGIN
  SELECT CASE WHEN c.xid IS NULL THEN c.seq ELSE c.seq_floor END INTO top FROM changes c
    WHERE c.seq > since AND (c.xid IS NULL OR (c.xid < oldest AND c.seq_floor IS NOT NULL))
    ORDER BY c.seq DESC LIMIT 1;
  top := greatest(since, top);
  SELECT greatest(top, max(CASE WHEN c.xid IS NULL THEN c.seq WHEN c.xid < oldest THEN c.seq_floor END)) INTO base
    FROM changes c WHERE c.seq > top;
  IF NOT EXISTS (SELECT 1 FROM changes n WHERE n.seq = base + 1) THEN RETURN base; END IF;
  RETURN (SELECT c.seq FROM changes c WHERE c.seq > base AND NOT EXISTS (SELECT 1 FROM changes n WHERE n.seq = c.seq + 1)
    ORDER BY c.seq LIMIT 1);
END
$fn$`;

/** The change feed's horizon on PostgreSQL read along the primary key (see BY_INDEX). SQLite has nothing to do. */
// biome-ignore lint/suspicious/noExplicitAny: migrations take Kysely<any> so they stay frozen in time
export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  await inTransaction(db, async (trx) => {
    await sql.raw(BY_INDEX).execute(trx);
  });
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  await inTransaction(db, async (trx) => {
    // Back to 070's function, as 070 made it.
    await sql.raw('DROP FUNCTION understudy_settled_seq(bigint)').execute(trx);
    await sql.raw(SETTLED_SEQ).execute(trx);
  });
}
