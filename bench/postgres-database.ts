import pg from 'pg';

/** The PostgreSQL server benches use: `DATABASE_URL`, else the machine's local server (trust auth, database `test`). */
const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function admin(query: string): Promise<void> {
  const c = new pg.Client({ connectionString: ADMIN_URL });
  await c.connect();
  try {
    await c.query(query);
  } finally {
    await c.end();
  }
}

/** A fresh, empty database on the bench server: its URL, and how to drop it. */
export async function freshDatabase(tag: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `understudy_bench_${tag}_${process.pid}_${Date.now()}`;
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
