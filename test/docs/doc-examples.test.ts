import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/sim/start-simulator.js';
import { BIN, type CliResult, collect } from '../helpers/run-cli.js';

/**
 * Docs that run: every SQL example of README.md and docs/schema.md, and every `understudy sql` / `understudy search`
 * command line they show, run against a mirror of the simulator, so none can rot.
 */
const DOCS = ['README.md', 'docs/schema.md'].map((f) => ({
  file: f,
  text: readFileSync(new URL(`../../${f}`, import.meta.url), 'utf8'),
}));
const blocks = (lang: string) =>
  DOCS.flatMap(({ file, text }) =>
    [...text.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => ({ file, body: m[1]! })),
  );
const SQL = blocks('sql');
const COMMANDS = blocks('sh')
  .flatMap(({ file, body }) => body.split('\n').map((line) => ({ file, line })))
  // Commands, not usage synopses (`understudy sql [--db FILE] …`).
  .filter(({ line }) => /(^|\$\(|\| )(bin\/)?understudy (sql|search) /.test(line) && !line.includes(' [--'));

let sim: Simulator;
let dir: string;
let db: string;
let tenant: string;
const params: Record<string, string> = {};

const run = (args: string[], opts: { input?: string; shell?: boolean } = {}): Promise<CliResult> => {
  const env = { ...process.env, UNDERSTUDY_DB: db, LOG_LEVEL: 'warn', PARTNERS_API_KEY: sim.tenants[0]!.key };
  const child = opts.shell
    ? spawn('bash', ['-c', `understudy() { "${process.execPath}" "${BIN}" "$@"; }\n${args[0]}`], { env })
    : spawn(process.execPath, [BIN, ...args], { env });
  child.stdin?.end(opts.input ?? '');
  return collect(child);
};

beforeAll(async () => {
  sim = await startSimulator({ port: 0, readLimit: 0, writeLimit: 0, records: 40, seed: 7, aroundDay: Date.now() });
  tenant = sim.tenants[0]!.slug;
  dir = mkdtempSync(join(tmpdir(), 'understudy-'));
  db = join(dir, 'mirror.db');
  // Two performances tomorrow and the day after, so "the next seven days" has rows on any day.
  for (const [k, e] of sim.controls.docs(tenant, 'event-instances').slice(0, 2).entries()) {
    const startDate = new Date(Date.now() + (k + 1) * 86_400_000).toISOString();
    const res = await fetch(`${sim.url}/partners/2026-02/${tenant}/event-instances/${e.id}`, {
      method: 'PATCH',
      headers: { authorization: `users API-Key ${sim.tenants[0]!.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ startDate }),
    });
    expect(res.status).toBe(200);
  }
  const synced = await run(['sync', '--base-url', sim.url, '--tenant', tenant, '--db', db]);
  expect(synced.code, synced.stderr).toBe(0);
  const season = sim.controls.docs(tenant, 'seasons')[0]!;
  Object.assign(params, { tenant, season: String(season.slug), words: 'season' });
  return async () => {
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  };
});

describe('docs that run', () => {
  it('has SQL examples that take the tenant as :tenant, never a literal, and left-join venues', () => {
    expect(SQL.length).toBeGreaterThanOrEqual(8);
    for (const { body } of SQL) expect(body).toMatch(/:tenant\b/);
    for (const { text } of DOCS) {
      expect(text).not.toMatch(/tenant *= *'[a-z]/);
      expect(text).not.toMatch(/(^|[^t] )join +venues/im);
    }
  });

  it.each(SQL.map((s, i) => [`${s.file} #${i + 1}: ${s.body.split('\n')[0]}`, s.body]))(
    'runs %s',
    async (_name, body) => {
      const names = [...new Set([...body.matchAll(/[:@$]([a-z_][a-z_0-9]*)/g)].map((m) => m[1]!))];
      const bind = names.flatMap((n) => ['-p', n, params[n] ?? 'x']);
      const r = await run(['sql', '--db', db, '--json', ...bind, '-'], { input: body });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      // Drafts are only mirrored when a tenant asks for them; every other example has something to show.
      if (!body.includes('doc_variants')) expect(JSON.parse(r.stdout).length).toBeGreaterThan(0);
    },
  );

  it.each(COMMANDS.map((c) => [`${c.file}: ${c.line.trim()}`, c.line]))('runs %s', async (_name, line) => {
    const command = line
      .replace(/(^|\s)#\s.*$/, '')
      .replace(/bin\/understudy/g, 'understudy')
      .replace(/<slug>/g, tenant)
      .replace(/data\/mirror\.db/g, db);
    const r = await run([command], { shell: true });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });
});
