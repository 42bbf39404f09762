import { createHash } from 'node:crypto';
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';

/** A statement's text is prepared once it has been run this many times by the process. */
const PREPARE_AFTER = 3;
/** At most this many statements are prepared (each costs memory in every backend that runs it). */
const MAX_PREPARED = 256;
/** The texts counted toward `PREPARE_AFTER` are forgotten past this many (a stream of one-off filters). */
const MAX_COUNTED = 4_096;

/**
 * Which statement texts run often enough to be worth a server-side prepared statement: the reads of `serve` repeat a
 * few shapes (a record by id, the copies of a collection, the related records of a page) thousands of times a second,
 * and PostgreSQL parses and plans an unnamed statement every time. A text seen `PREPARE_AFTER` times gets a name; the
 * `pg` driver then prepares it once per connection and runs it by name. One-off texts (most filtered lists) stay
 * unnamed, and the named ones are capped.
 */
export class StatementNames {
  private readonly counts = new Map<string, number>();
  private readonly names = new Map<string, string>();

  nameOf(text: string): string | undefined {
    const named = this.names.get(text);
    if (named !== undefined || this.names.size >= MAX_PREPARED) return named;
    const n = (this.counts.get(text) ?? 0) + 1;
    if (n < PREPARE_AFTER) {
      if (this.counts.size >= MAX_COUNTED) this.counts.clear();
      this.counts.set(text, n);
      return undefined;
    }
    this.counts.delete(text);
    // Named by its text, so a name always means one text in every connection (and every process) that prepares it.
    const name = `us_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    this.names.set(text, name);
    return name;
  }
}

/**
 * `pool` as Kysely takes it, with the statements `names` picks run as prepared statements. Only reads go through it:
 * a prepared statement's plan may be generic, which suits the by-key and by-reference lookups that repeat.
 */
export function preparingPool(pool: pg.Pool, names: StatementNames): PostgresPool {
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      const query = ((text: unknown, values?: readonly unknown[]) => {
        if (typeof text !== 'string') return client.query(text as never);
        const name = names.nameOf(text);
        return name === undefined
          ? client.query(text, values as unknown[])
          : client.query({ name, text, values: values as unknown[] });
      }) as unknown as PostgresPoolClient['query'];
      return { query, release: () => client.release() };
    },
    end: () => pool.end(),
  };
}
