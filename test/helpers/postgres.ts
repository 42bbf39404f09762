import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { onTestFinished } from 'vitest';
import { poolConfig } from '../../src/store/postgres/pool-config.js';

/** The PostgreSQL server tests use: `DATABASE_URL`, else the machine's local server (trust auth, database `test`). */
export const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const withDatabase = (url: string, name: string): string => {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
};

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: ADMIN_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Creates a fresh, empty database on the test server; returns its URL and a function that drops it. */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `understudy_t_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  return {
    url: withDatabase(ADMIN_URL, name),
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/** A fresh database dropped when the current test finishes. */
export async function testDatabase(): Promise<string> {
  const db = await createTestDatabase();
  onTestFinished(() => db.drop());
  return db.url;
}

/** Runs a query on a connection of its own, with the mirror's type parsers (counts as numbers, JSON as text). */
export async function pgQuery(url: string, sqlText: string, params: readonly unknown[] = []) {
  const pool = new pg.Pool(poolConfig(url, 1));
  // pool.end() resolves before its connections have closed: one the server then terminates (the test's database
  // dropped WITH (FORCE)) reports an error through the pool, which must not be an uncaught exception.
  pool.on('error', () => undefined);
  try {
    let i = 0;
    const text = sqlText.replace(/\?/g, () => `$${++i}`);
    return (await pool.query(text, [...params])).rows as Record<string, unknown>[];
  } finally {
    await pool.end();
  }
}
