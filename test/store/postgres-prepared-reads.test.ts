import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { poolConfig } from '../../src/store/postgres/pool-config.js';
import { preparingPool, StatementNames } from '../../src/store/postgres/preparing-pool.js';
import { testDatabase } from '../helpers/postgres.js';

// serve's reads on PostgreSQL repeat a few statement shapes thousands of times a second: those are prepared once per
// connection (parsed and planned once), the one-off ones are not, and there is a cap.

describe('StatementNames', () => {
  it('names a text from its third run, the same name for the same text, and none past the cap', () => {
    const names = new StatementNames();
    expect(names.nameOf('select 1')).toBeUndefined();
    expect(names.nameOf('select 1')).toBeUndefined();
    const name = names.nameOf('select 1');
    expect(name).toMatch(/^us_[0-9a-f]{24}$/);
    expect(names.nameOf('select 1')).toBe(name);
    expect(new StatementNames().nameOf('select 2')).toBeUndefined();
    for (let i = 0; i < 255; i++) for (let k = 0; k < 3; k++) names.nameOf(`select ${i + 10}`);
    expect(names.nameOf('select 10')).toMatch(/^us_/);
    for (let k = 0; k < 5; k++) expect(names.nameOf('select -1')).toBeUndefined();
  });
});

describe('reads through the preparing pool (PostgreSQL)', () => {
  it('run a repeated statement prepared, with the same answers, and leave one-off statements unnamed', async () => {
    const url = await testDatabase();
    const pool = new pg.Pool(poolConfig(url, 1));
    const db = new Kysely<Record<string, never>>({
      dialect: new PostgresDialect({ pool: preparingPool(pool, new StatementNames()) }),
    });
    onTestFinished(() => db.destroy());
    const byId = (id: number) => sql<{ n: number }>`select ${id}::int + 1 as n`.execute(db);
    const answers: number[] = [];
    for (let i = 0; i < 5; i++) answers.push((await byId(i)).rows[0]?.n ?? -1);
    expect(answers).toEqual([1, 2, 3, 4, 5]);
    await sql`select 'once' as x`.execute(db);
    const prepared = await sql<{ name: string; statement: string }>`
      select name, statement from pg_prepared_statements order by name`.execute(db);
    expect(prepared.rows).toEqual([{ name: expect.stringMatching(/^us_/), statement: 'select $1::int + 1 as n' }]);
    // A failure of a prepared statement is the statement's own, and the next run goes on by name.
    for (let i = 0; i < 4; i++)
      await expect(sql`select ${1}::int / 0 as n`.execute(db)).rejects.toThrow(/division by zero/);
    expect((await byId(41)).rows).toEqual([{ n: 42 }]);
  });
});
