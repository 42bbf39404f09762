import { type Kysely, sql } from 'kysely';
import { isPostgres } from './lib/engine.js';

// Frozen copy of the tables with a typed `title` column as of this migration.
const TITLED = ['pages', 'posts', 'blogs', 'seasons', 'series', 'events', 'venues', 'forms'];

const nameOf = (table: string) => `${table}_read_title`;

/**
 * On SQLite, an index of each live record's title by tenant, for the `like` and `contains` reads on `title` that
 * `serve` answers (docs/api.md, Reads). No index finds a word inside a title, but SQLite tests the title in the index
 * and reads only the matching rows, instead of reading every row of the tenant (its title stored after its document):
 * a `like` on the events' titles, 3,000 events, 1.13 ms a read before, 0.46 ms after; at 33,334 events (the
 * serve-reads bench), 20 reads a second before, 145 after. Not on PostgreSQL: its planner took the partial index
 * (`deleted_at is null`, as every read asks) for other reads of the same tables, and serve's depth-1 reads fell from
 * 1,406 a second to 153 (30,000 instances), a sync's writes slowed too; its `like` reads its rows in parallel.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations take Kysely<any> so they stay frozen in time
export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) return;
  for (const table of TITLED)
    await db.schema
      .createIndex(nameOf(table))
      .ifNotExists()
      .on(table)
      .columns(['tenant', 'title'])
      .where(sql.ref('deleted_at'), 'is', null)
      .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up()
export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) return;
  for (const table of TITLED) await db.schema.dropIndex(nameOf(table)).ifExists().execute();
}
