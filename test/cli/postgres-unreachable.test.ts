import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { closedPort, runShell, shq, twoTenantSim } from '../helpers/operator.js';
import { ADMIN_URL } from '../helpers/postgres.js';

/** A URL of the test server naming a database that does not exist. */
const missingDatabase = (): { url: string; name: string } => {
  const name = `understudy_missing_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  return { url: u.toString(), name };
};

const lines = (s: string) => s.split('\n').filter((l) => l.trim() !== '');

describe('a PostgreSQL mirror that cannot be reached', () => {
  it('sync says "cannot connect to …" with the reason, in one line: a database that does not exist, a closed port', async () => {
    const { sim, a } = await twoTenantSim();
    const missing = missingDatabase();
    const args = `--base-url ${shq(sim.url)} --tenant ${a.slug}`;
    const r = await runShell(`$U sync ${args} --db ${shq(missing.url)} --quiet`, { PARTNERS_API_KEY: a.key });
    expect(r.code, r.stderr).toBe(2);
    expect(lines(r.stderr)).toEqual([
      `understudy sync: cannot connect to ${missing.url}: database "${missing.name}" does not exist`,
    ]);
    const port = await closedPort();
    const down = `postgres://postgres@127.0.0.1:${port}/mirror`;
    const d = await runShell(`$U sync ${args} --db ${shq(down)} --quiet`, { PARTNERS_API_KEY: a.key });
    expect(d.code, d.stderr).toBe(2);
    expect(lines(d.stderr)).toEqual([
      expect.stringMatching(new RegExp(`^understudy sync: cannot connect to ${down}: .*ECONNREFUSED`)),
    ]);
  });

  it('status --check gives a database that does not exist the exit of a missing SQLite file (7)', async () => {
    const missing = missingDatabase();
    const r = await runShell(`$U status --check --db ${shq(missing.url)}`);
    expect(r.code, r.stderr).toBe(7);
    expect(lines(r.stderr)).toEqual([`understudy status: mirror ${missing.url} does not exist`]);
    const file = await runShell(`$U status --check --db /nonexistent/mirror.db`);
    expect(file.code).toBe(7);
    // Without --check, both are errors the command cannot work past: exit 2, one line.
    const plain = await runShell(`$U status --db ${shq(missing.url)}`);
    expect(plain.code).toBe(2);
    expect(lines(plain.stderr)).toEqual([
      `understudy status: cannot connect to ${missing.url}: database "${missing.name}" does not exist`,
    ]);
  });
});
