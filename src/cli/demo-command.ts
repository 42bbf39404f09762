import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative, sep } from 'node:path';
import { startSimulator } from '../sim/start-simulator.js';
import { printHelp } from './command-help.js';
import { parseFlags } from './parse-flags.js';
import { searchCommand } from './search-command.js';
import { DEMO_SPEC } from './specs/demo-spec.js';
import { sqlCommand } from './sql-command.js';
import { syncCommand } from './sync-command.js';

const UPCOMING =
  'SELECT tenant, start_local, event_title, venue_title, availability FROM upcoming_performances ' +
  'ORDER BY start_date LIMIT 10';
/** The event of the next performance: what the demo searches for, so the search finds something on every day. */
const NEXT_TITLE =
  'SELECT event_title FROM upcoming_performances WHERE event_title IS NOT NULL ORDER BY start_date LIMIT 1';

/** `s` quoted for a POSIX shell, so every command the demo prints can be pasted as is. */
const sh = (s: string): string => (/^[\w./:=@-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
/**
 * The command as it was invoked, so the demo's lines can be pasted as they are: `bin/understudy` from the project's folder
 * (after `npm ci` nothing is on PATH), the path below the folder it runs in, its absolute path from elsewhere, and
 * `understudy` for an installed copy (under `node_modules`, as `npm install -g` puts it on PATH).
 */
export function invokedAs(script: string | undefined, cwd: string): string {
  if (!script || script.split(sep).includes('node_modules')) return 'understudy';
  const rel = relative(cwd, script);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return script;
  return rel.includes(sep) ? rel : `.${sep}${rel}`;
}

/** A command as the demo shows it: `understudy …`, the name the README and every doc use. */
const shown = (argv: readonly string[]) => `$ understudy ${argv.map(sh).join(' ')}\n`;

/**
 * What makes `understudy` the command as it was invoked, shown before any command: nothing for an installed copy,
 * else an alias to run first, so every line the demo prints pastes as printed (after `npm ci` nothing is on PATH).
 */
function aliasLine(): string {
  const program = invokedAs(process.argv[1], process.cwd());
  return program === 'understudy' ? '' : `$ alias understudy=${sh(program)}\n`;
}

export async function demoCommand(argv: string[]): Promise<number> {
  const { help } = parseFlags(argv, DEMO_SPEC);
  if (help) return printHelp(DEMO_SPEC, help);
  process.env.LOG_LEVEL ??= 'warn'; // the summary table says what happened; JSON logs would drown it
  const dir = mkdtempSync(join(tmpdir(), 'understudy-demo-'));
  const db = join(dir, 'demo.db');
  const config = join(dir, 'understudy.json');
  const sim = await startSimulator({ seed: 7, records: 30, routes: 'full', aroundDay: Date.now() });
  let synced = false;
  try {
    const tenants = sim.tenants.map((t, i) => {
      // Keys live in the environment only; the config names the variable.
      process.env[`DEMO_KEY_${i}`] = t.key;
      return { slug: t.slug, apiKeyEnv: `DEMO_KEY_${i}` };
    });
    writeFileSync(config, JSON.stringify({ baseUrl: sim.url, database: db, tenants }, null, 2));
    const slugs = sim.tenants.map((t) => t.slug);
    process.stdout.write(`Simulator at ${sim.url} with tenants ${slugs.join(', ')} (programme around today)\n\n`);
    process.stdout.write(aliasLine());
    process.stdout.write(shown(['sync', '--config', config]));
    const code = await syncCommand(['--config', config]);
    if (code !== 0) return code;
    synced = true;

    return await showMirror(db, dir, slugs[0] ?? '');
  } finally {
    await sim.close();
    // The config points at a simulator that is gone: only the mirror is worth keeping.
    if (synced) rmSync(config, { force: true });
    else rmSync(dir, { recursive: true, force: true });
  }
}

/** The demo's queries over the fresh mirror: the next performances, a search for the next one, what to try next. */
async function showMirror(db: string, dir: string, tenant: string): Promise<number> {
  const upcoming = ['sql', '--db', db, UPCOMING];
  process.stdout.write(`\nThe next performances, local time as each venue prints it:\n${shown(upcoming)}`);
  const shownCode = await sqlCommand(upcoming.slice(1));
  if (shownCode !== 0) return shownCode;
  const title = await nextTitle(db);
  const search = ['search', '--db', db, title || 'opera'];
  process.stdout.write(`\nFull-text search, best match first:\n${shown(search)}`);
  const searchCode = await searchCommand(search.slice(1));
  if (searchCode !== 0) return searchCode;
  process.stdout.write(`\nThe mirror is kept at ${db} (remove ${dir} when done). Next, try:\n`);
  for (const next of [
    ['sql', '--db', db, '--tables'],
    ['sql', '--db', db, '--schema', 'upcoming_performances'],
    [
      'sql',
      '--db',
      db,
      '-p',
      'tenant',
      tenant,
      'SELECT start_local, event_title, venue_title FROM upcoming_performances WHERE tenant = :tenant ORDER BY start_date LIMIT 5',
    ],
    ['search', '--db', db, '--tenant', tenant, '--json', '--limit', '3', title.split(/\s+/).pop() || 'opera'],
  ])
    process.stdout.write(shown(next));
  return 0;
}

/** The title of the next performance's event; '' when none is upcoming (the demo then searches for opera). */
async function nextTitle(db: string): Promise<string> {
  let title = '';
  const capture = {
    stdout: (s: string) => {
      title += s;
    },
    stdin: async () => '',
    env: process.env,
  };
  await sqlCommand(['--db', db, '--raw', NEXT_TITLE], capture).catch(() => 0);
  return title.trim();
}
