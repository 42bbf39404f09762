import { type Kysely, sql } from 'kysely';
import { inTransaction, isPostgres } from './lib/engine.js';

/** The row lock the change log's writers took until now (migration 2026-11-27-020), as their functions hold it. */
const ROW_LOCK =
  'PERFORM 1 FROM change_log_lock FOR UPDATE; ' +
  "IF NOT FOUND THEN RAISE EXCEPTION 'change_log_lock has lost its row: changes cannot be ordered'; END IF;";

/** What stands in its place, so that `down` can put the lock back exactly where it was. */
const PARALLEL = '-- no lock: writers commit in parallel, readers wait for the feed to settle (2026-11-28-070)';

/** Every function that took it: the per-row one of 2026-11-23-060 (unused since 2026-11-26-001) and its four. */
const FUNCTIONS = [
  'understudy_log_change',
  'understudy_log_inserts',
  'understudy_log_updates',
  'understudy_log_inserts_variants',
  'understudy_log_updates_variants',
];

/** The setting a writer's transaction keeps its floor in (transaction-local), read by `seq_floor`'s default. */
const FLOOR_SETTING = 'understudy.seq_floor';

/**
 * Called by a writer first in a transaction that may change record rows, before the transaction has an id: notes
 * how far the change sequence had gone. Every seq up to it was handed out before this transaction took its id, so
 * it belongs to a transaction older than this one. A transaction that already has an id notes nothing (NULL).
 */
const NOTE_FLOOR = `CREATE FUNCTION understudy_note_seq_floor() RETURNS void LANGUAGE sql VOLATILE AS $fn$
  SELECT set_config('${FLOOR_SETTING}',
    CASE WHEN pg_current_xact_id_if_assigned() IS NULL
      THEN coalesce(pg_sequence_last_value(pg_get_serial_sequence('changes', 'seq')::regclass), 0)::text
      ELSE '' END, true);
$fn$`;

/**
 * The greatest seq H >= since such that every seq in (since, H] has committed or never will: a reader of the
 * change feed advances only that far. A seq is taken when its change row is inserted (after its transaction took
 * its id), but transactions commit in any order, so a seq may still commit below one already visible. What is
 * known settled, in the statement's snapshot:
 * - every seq up to the floor of a change whose transaction is older than the oldest one still running (xmin):
 *   each of those seqs belongs to a transaction older still, so ended; a row with no xid (written before this
 *   migration, or copied from another mirror) settles itself and every seq below it;
 * - from there, every seq as long as they follow one another without a hole (each one visible).
 * A hole left by a rollback is passed once a later writer's floor covers it (readers in understudy also take a
 * transaction id of their own as a mark, and pass it once every transaction older than the mark has ended).
 * STABLE, so it reads the calling statement's snapshot: the rows that statement sees are the ones judged.
 * Exported for 2026-11-28-080, which reads the same answer along the primary key and puts this back on `down`.
 */
export const SETTLED_SEQ = `CREATE FUNCTION understudy_settled_seq(since bigint) RETURNS bigint LANGUAGE sql STABLE AS $fn$
  WITH snap AS (
    SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin
  ), base AS (
    SELECT greatest(since, (
      SELECT max(CASE WHEN c.xid IS NULL THEN c.seq WHEN c.xid < snap.xmin THEN c.seq_floor END)
      FROM changes c WHERE c.seq > since)) AS b
    FROM snap
  )
  SELECT min(x.s) FROM (SELECT base.b AS s FROM base UNION ALL SELECT c.seq FROM changes c, base WHERE c.seq > base.b) x
  WHERE NOT EXISTS (SELECT 1 FROM changes n WHERE n.seq = x.s + 1)
$fn$`;

/** Each function made again with `from` replaced by `to` in its body; a function without `from` is an error. */
// biome-ignore lint/suspicious/noExplicitAny: migrations take Kysely<any> so they stay frozen in time
async function rewrite(db: Kysely<any>, from: string, to: string): Promise<void> {
  for (const name of FUNCTIONS) {
    const query = sql<{ def: string }>`SELECT pg_get_functiondef(to_regprocedure(${`${name}()`})) AS def`;
    const def = (await query.execute(db)).rows[0]?.def ?? '';
    if (!def.includes(from)) throw new Error(`${name}() does not hold "${from}"`);
    await sql.raw(def.replaceAll(from, to)).execute(db);
  }
}

/**
 * Writers of the change log commit in parallel on PostgreSQL: the row lock of `change_log_lock` leaves the
 * triggers (and the store stops taking it), and readers advance only to where the feed has settled
 * (`understudy_settled_seq`). Each change row records its transaction's id (`xid`) and the floor its writer
 * noted before taking that id (`seq_floor`); rows already logged have neither, and settle themselves. The table
 * `change_log_lock` stays, unused, so that processes of an older build still running during an upgrade can go on
 * taking their lock. SQLite keeps its one writer: it gets the two columns (always NULL) so both engines have the
 * same tables, and nothing else.
 */
// biome-ignore lint/suspicious/noExplicitAny: see rewrite()
export async function up(db: Kysely<any>): Promise<void> {
  await inTransaction(db, async (trx) => {
    const pg = isPostgres(trx);
    // Without a default first: the rows already there keep NULL and nothing is rewritten.
    await trx.schema
      .alterTable('changes')
      .addColumn('xid', pg ? sql`xid8` : 'integer')
      .execute();
    await trx.schema
      .alterTable('changes')
      .addColumn('seq_floor', pg ? 'bigint' : 'integer')
      .execute();
    if (!pg) return;
    await sql.raw('ALTER TABLE changes ALTER COLUMN xid SET DEFAULT pg_current_xact_id()').execute(trx);
    await sql
      .raw(
        `ALTER TABLE changes ALTER COLUMN seq_floor SET DEFAULT nullif(current_setting('${FLOOR_SETTING}', true), '')::bigint`,
      )
      .execute(trx);
    await sql.raw(NOTE_FLOOR).execute(trx);
    await sql.raw(SETTLED_SEQ).execute(trx);
    await rewrite(trx, ROW_LOCK, PARALLEL);
  });
}

// biome-ignore lint/suspicious/noExplicitAny: see rewrite()
export async function down(db: Kysely<any>): Promise<void> {
  await inTransaction(db, async (trx) => {
    if (isPostgres(trx)) {
      await rewrite(trx, PARALLEL, ROW_LOCK);
      await sql.raw('DROP FUNCTION IF EXISTS understudy_settled_seq(bigint)').execute(trx);
      await sql.raw('DROP FUNCTION IF EXISTS understudy_note_seq_floor()').execute(trx);
    }
    await trx.schema.alterTable('changes').dropColumn('seq_floor').execute();
    await trx.schema.alterTable('changes').dropColumn('xid').execute();
  });
}
