import { type Kysely, sql } from 'kysely';
import { inTransaction, isPostgres } from './lib/engine.js';

/** The advisory lock the change log's writers took until now (migrations 2026-11-23-060 and 2026-11-26-001). */
const ADVISORY = 'PERFORM pg_advisory_xact_lock(7305045001);';

/**
 * What they take instead: the one row of `change_log_lock`, FOR UPDATE. A READ ONLY transaction cannot lock a row
 * (PostgreSQL refuses `SELECT … FOR UPDATE/SHARE` there, in dynamic SQL too), so `understudy sql` cannot hold it,
 * whereas any session may take any advisory lock.
 */
const ROW_LOCK =
  'PERFORM 1 FROM change_log_lock FOR UPDATE; ' +
  "IF NOT FOUND THEN RAISE EXCEPTION 'change_log_lock has lost its row: changes cannot be ordered'; END IF;";

/** Every function that took the advisory lock: the per-row one of 060 (unused since 2026-11-26-001) and its four. */
const FUNCTIONS = [
  'understudy_log_change',
  'understudy_log_inserts',
  'understudy_log_updates',
  'understudy_log_inserts_variants',
  'understudy_log_updates_variants',
];

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
 * The change log's writers on PostgreSQL keep `seq` in commit order by a row lock instead of an advisory lock, so
 * a read-only statement (`understudy sql`) that takes the old key stalls nothing. SQLite orders its writers by its
 * write lock and never takes this row; the table is made there too, so both engines have the same tables.
 */
// biome-ignore lint/suspicious/noExplicitAny: see rewrite()
export async function up(db: Kysely<any>): Promise<void> {
  await inTransaction(db, async (trx) => {
    await trx.schema
      .createTable('change_log_lock')
      .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
      .execute();
    await trx.insertInto('change_log_lock').values({ id: 1 }).execute();
    if (isPostgres(trx)) await rewrite(trx, ADVISORY, ROW_LOCK);
  });
}

// biome-ignore lint/suspicious/noExplicitAny: see rewrite()
export async function down(db: Kysely<any>): Promise<void> {
  await inTransaction(db, async (trx) => {
    if (isPostgres(trx)) await rewrite(trx, ROW_LOCK, ADVISORY);
    await trx.schema.dropTable('change_log_lock').execute();
  });
}
