import { type Kysely, PostgresAdapter } from 'kysely';

/**
 * Whether a migration runs on PostgreSQL (else SQLite): the migrations are one set for both engines, and differ
 * only where the types do (`jsonb` for record documents, `serial` for a generated key).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations take Kysely<any> so they stay frozen in time
export const isPostgres = (db: Kysely<any>): boolean => db.getExecutor().adapter instanceof PostgresAdapter;

/**
 * Runs `fn` in one transaction. Kysely runs PostgreSQL migrations inside a transaction already (`db` is then one);
 * on SQLite it does not, so a migration that fails half way would leave half its changes behind.
 */
// biome-ignore lint/suspicious/noExplicitAny: see isPostgres
export async function inTransaction(db: Kysely<any>, fn: (trx: Kysely<any>) => Promise<void>): Promise<void> {
  if (db.isTransaction) return fn(db);
  await db.transaction().execute(fn);
}
