import { type Kysely, sql } from 'kysely';
import type { ChangeHorizon } from '../change-horizon.js';
import type { Database } from '../db-schema.js';

/**
 * Notes, before the transaction takes its id, how far the change sequence has gone (migration 2026-11-28-070): the
 * changes it logs carry it as `seq_floor`, which tells readers every seq up to it belongs to an older transaction.
 */
export async function noteSeqFloor(db: Kysely<Database>): Promise<void> {
  await sql`select understudy_note_seq_floor()`.execute(db);
}

/**
 * The change feed's horizon on PostgreSQL. `settled` is the database's own `understudy_settled_seq` (migration
 * 2026-11-28-070: floors of changes older than the oldest transaction still running, then seqs without a hole).
 *
 * A mark is a transaction id taken after the snapshot that saw the greatest seq: every seq up to it was taken by a
 * transaction that had its id before that snapshot (a change is logged after its transaction took its id), so a
 * smaller one. Once the oldest transaction still running (`xmin`) is past the mark, all of them have ended. The
 * snapshot's own `xmax` would not do: it is the last transaction to have ended plus one, and a transaction that took
 * its id after that one and is still running lies beyond it, in no snapshot's list.
 */
export const postgresChangeHorizon: ChangeHorizon = {
  async settled(db, since) {
    const r = await sql<{ settled: number | string; last: number | string | null }>`
      select understudy_settled_seq(${since}) as settled, (select max(seq) from changes) as last`.execute(db);
    const row = r.rows[0];
    return { settled: Number(row?.settled ?? since), last: Number(row?.last ?? 0) };
  },
  async mark(db) {
    // One statement: its snapshot is taken before the id is.
    const r = await sql<{ seq: number | string | null; mark: string }>`
      select (select max(seq) from changes) as seq, pg_current_xact_id()::text as mark`.execute(db);
    const row = r.rows[0];
    return { seq: Number(row?.seq ?? 0), mark: row?.mark ?? '0' };
  },
  async passed(db, mark) {
    const r = await sql<{ passed: boolean }>`
      select pg_snapshot_xmin(pg_current_snapshot()) > ${mark}::xid8 as passed`.execute(db);
    return r.rows[0]?.passed === true;
  },
};
