import type { Kysely } from 'kysely';
import type { Database } from './db-schema.js';

/**
 * How far the change feed has settled, on an engine whose change-writing transactions commit in parallel, so out of
 * `seq` order (PostgreSQL): a seq is taken when a change is logged, and a smaller one may still commit after a
 * larger one is visible. A reader advances only through settled seqs, so it never passes one that may still come.
 * An engine without a horizon commits those transactions one at a time, in `seq` order (SQLite): every seq it shows
 * has settled.
 */
export interface ChangeHorizon {
  /**
   * In one snapshot: the greatest seq H >= `since` such that every seq in (since, H] has committed or never will,
   * and the greatest seq committed (`last`; more than `settled` while changes wait behind a seq in flight).
   */
  settled(db: Kysely<Database>, since: number): Promise<{ readonly settled: number; readonly last: number }>;
  /**
   * The greatest seq committed now, with a mark that `passed` accepts once every transaction that could still
   * commit a smaller seq has ended. May take a transaction id of its own: call it while changes wait, not per read.
   */
  mark(db: Kysely<Database>): Promise<{ readonly seq: number; readonly mark: string }>;
  /** Whether every transaction that could still commit a seq at or below the mark's has ended. */
  passed(db: Kysely<Database>, mark: string): Promise<boolean>;
}
