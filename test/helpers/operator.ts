import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { onTestFinished } from 'vitest';
import { type SimulatorOptions, startSimulator } from '../../src/sim/start-simulator.js';
import { BIN, type CliResult, collect } from './run-cli.js';
import { tempDir } from './sync-harness.js';

/** A simulator with two tenants and limits off (unless asked), stopped when the test ends. */
export async function twoTenantSim(opts: SimulatorOptions = {}) {
  const sim = await startSimulator({ port: 0, readLimit: 0, writeLimit: 0, records: 10, routes: 'full', ...opts });
  onTestFinished(() => sim.close());
  const [a, b] = sim.tenants;
  if (!a || !b) throw new Error('the simulator has fewer than two tenants');
  return { sim, a, b };
}

/** Writes a config file in `dir` and returns its path. */
export function writeConfig(dir: string, name: string, config: Record<string, unknown>): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(config));
  return path;
}

/** How many rows of `table` the mirror at `db` has for `tenant` (0 while there is no such file or table). */
export function rowsOf(db: string, table: string, tenant: string): number {
  let raw: Database.Database;
  try {
    raw = new Database(db, { readonly: true, fileMustExist: true });
  } catch {
    return 0;
  }
  try {
    return (raw.prepare(`SELECT count(*) AS n FROM ${table} WHERE tenant = ?`).get(tenant) as { n: number }).n;
  } catch {
    return 0;
  } finally {
    raw.close();
  }
}

/** A config of `tenants` (slug, key variable, extra fields) on the simulator, its mirror in `dir`. */
export function tenantConfig(
  dir: string,
  baseUrl: string,
  tenants: readonly Record<string, unknown>[],
  extra: Record<string, unknown> = {},
): { config: string; db: string } {
  const db = join(dir, 'm.db');
  return { config: writeConfig(dir, 'c.json', { baseUrl, database: db, tenants, ...extra }), db };
}

/** A loopback port nothing listens on. */
export async function closedPort(): Promise<number> {
  const s = createServer().listen(0, '127.0.0.1');
  await new Promise((r) => s.once('listening', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** The environment a cron job gives: no terminal, nothing of ours but what the test names. */
const cleanEnv = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => {
  const base: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
  return { ...base, ...env };
};

/**
 * Runs `sh -c script` as cron would: in a new session with no controlling terminal (`setsid`), stdin from
 * /dev/null. `$U` in the script is the CLI (`node bin/understudy`).
 */
export function runShell(script: string, env: NodeJS.ProcessEnv = {}, cwd?: string): Promise<CliResult> {
  const child = spawn('setsid', ['-w', 'sh', '-c', script], {
    env: cleanEnv({ U: `${process.execPath} ${BIN}`, ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(cwd ? { cwd } : {}),
  });
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return collect(child);
}

/** The shell's quoting of one word. */
export const shq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** A typescript's text: script's own header lines dropped, carriage returns made line ends. */
const typescript = (path: string): string => {
  let raw = '';
  try {
    raw = readFileSync(path, 'latin1');
  } catch {
    return '';
  }
  return raw
    .split('\n')
    .filter((l) => !/^Script (started|done) on/.test(l))
    .join('\n')
    .replace(/\r/g, '\n');
};

/**
 * Starts the CLI on a real pseudo-terminal (`script -qfec`, util-linux), the way a person at a terminal runs it;
 * `TERM` allows colour. `text()` is what the terminal shows so far (escapes kept, carriage returns made line
 * ends); `pid()` the CLI's own pid (for signals); `done` its end.
 */
export function startOnTerminal(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  opts: { readonly timeoutS?: number; readonly signal?: 'INT' | 'TERM' } = {},
) {
  const dir = tempDir();
  const log = join(dir, 'typescript');
  const pidFile = join(dir, 'pid');
  const cli = [process.execPath, BIN, ...args].map(shq).join(' ');
  const timed = opts.timeoutS ? `timeout -s ${opts.signal ?? 'TERM'} ${opts.timeoutS} ${cli}` : cli;
  const child = spawn('script', ['-qfec', `sh -c ${shq(`echo $$ > ${shq(pidFile)}; exec ${timed}`)}`, log], {
    env: cleanEnv({ TERM: 'xterm-256color', ...env }),
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const done = new Promise<{ code: number | null; text: string }>((resolve) =>
    child.once('close', (code) => resolve({ code, text: typescript(log) })),
  );
  return {
    done,
    text: () => typescript(log),
    pid: (): number | null => {
      try {
        return Number(readFileSync(pidFile, 'utf8').trim()) || null;
      } catch {
        return null;
      }
    },
  };
}

/** The escape character, for patterns over what a terminal received. */
export const ESC = '\u001b';
/** An ANSI escape sequence (CSI, or save/restore cursor). */
export const ANSI = `${ESC}\\[[0-9;?]*[A-Za-z]|${ESC}[78]`;

/** The text without ANSI escapes. */
export const plain = (s: string): string => s.replace(new RegExp(ANSI, 'g'), '');
