/**
 * `bin/understudy` as a child process, for the benches that drive the product's own entry points: a command run to
 * its end, a long-lived one (the worker) with its stderr kept in a file, its stop, and what /proc says of it. Every
 * call is asynchronous: an in-process simulator shares this event loop and must keep answering meanwhile.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/understudy', import.meta.url));

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function freePort(): Promise<number> {
  const s = createServer().listen(0, '127.0.0.1');
  await once(s, 'listening');
  const addr = s.address();
  await new Promise((r) => s.close(r));
  return typeof addr === 'object' && addr ? addr.port : 0;
}

/** What a command printed and how it exited. */
export interface CommandResult {
  readonly code: number;
  readonly out: string;
  readonly err: string;
  readonly ms: number;
}

/** Runs `understudy ARGS` to its end. */
export function understudy(args: readonly string[], env: NodeJS.ProcessEnv): Promise<CommandResult> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({
        code: code ?? 1,
        out: Buffer.concat(out).toString(),
        err: Buffer.concat(err).toString(),
        ms: performance.now() - t0,
      }),
    );
  });
}

/** Starts `understudy ARGS` in the background (node flags `nodeArgs`), its stderr appended to `logPath`. */
export function spawnUnderstudy(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  logPath: string,
  nodeArgs: readonly string[] = [],
): ChildProcess {
  const log = openSync(logPath, 'a');
  // A process warning (MaxListenersExceeded, say) then comes with the stack that caused it.
  return spawn(process.execPath, ['--trace-warnings', ...nodeArgs, BIN, ...args], {
    env,
    stdio: ['ignore', 'ignore', log],
  });
}

/** SIGTERM, up to `graceMs` to exit, then SIGKILL: the exit code (null when killed) and how long it took. */
export async function stopChild(child: ChildProcess, graceMs = 15_000): Promise<{ code: number | null; ms: number }> {
  const t0 = performance.now();
  if (child.exitCode !== null || child.signalCode !== null) return { code: child.exitCode, ms: 0 };
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
  return { code: child.exitCode, ms: performance.now() - t0 };
}

/** One row of `understudy changes --json`. */
export interface ChangeRow {
  readonly seq: number;
  readonly at: string;
  readonly kind: string;
  readonly tenant: string;
  readonly collection: string;
  readonly id: string;
  readonly variant?: string | null;
  readonly updated_at_after?: string | null;
}

/** The mirror's change log after `since` (`understudy changes --json`). */
export async function readChanges(db: string, since: number, env: NodeJS.ProcessEnv): Promise<ChangeRow[]> {
  const r = await understudy(['changes', '--db', db, '--json', '--since', String(since)], env);
  if (r.code !== 0) throw new Error(`changes exited ${r.code}: ${r.err.slice(-300)}`);
  return JSON.parse(r.out) as ChangeRow[];
}

/** The rows of a read-only statement (`understudy sql --json`). */
export async function sqlRows<T>(db: string, statement: string, env: NodeJS.ProcessEnv): Promise<T[]> {
  const r = await understudy(['sql', '--db', db, '--json', statement], env);
  if (r.code !== 0) throw new Error(`sql exited ${r.code}: ${r.err.slice(-300)}`);
  return JSON.parse(r.out) as T[];
}

/** The `q` quantile (nearest rank) of `xs`; NaN when empty. */
export const quantile = (xs: readonly number[], q: number): number => {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] as number;
};

/** A process's resident memory (bytes) and CPU time so far (seconds, user + system), from /proc; null once gone. */
export function procSample(pid: number): { rss: number; cpuS: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
    // Fields after the command's closing parenthesis: utime and stime are the 14th and 15th of the whole line.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(rest[11]) + Number(rest[12]);
    return { rss: rssKb * 1024, cpuS: ticks / 100 };
  } catch {
    return null;
  }
}

/** What a worker wrote to stderr: its log's warnings and errors (pino JSON lines) by message, and other lines. */
export interface LogDigest {
  readonly warn: number;
  readonly error: number;
  /** The most frequent warnings and errors, `N× message (code message)`. */
  readonly top: readonly string[];
  /** Lines that are not the log's (a Node process warning and its stack, say): how many, and the first few. */
  readonly strayCount: number;
  readonly stray: readonly string[];
}

/** Reads a worker's stderr file into a `LogDigest`. */
export function logDigest(path: string): LogDigest {
  let warn = 0;
  let error = 0;
  const byMsg = new Map<string, number>();
  const stray: string[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    let o: { level?: number; msg?: string; err?: { code?: string; message?: string } };
    try {
      o = JSON.parse(line) as typeof o;
    } catch {
      stray.push(line);
      continue;
    }
    const level = o.level ?? 30;
    if (level < 40) continue;
    if (level >= 50) error++;
    else warn++;
    const msg = `${o.msg ?? ''}${o.err ? ` (${o.err.code ?? ''} ${String(o.err.message ?? '').slice(0, 100)})` : ''}`;
    byMsg.set(msg, (byMsg.get(msg) ?? 0) + 1);
  }
  const top = [...byMsg]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([m, n]) => `${n}× ${m}`);
  return { warn, error, top, strayCount: stray.length, stray: stray.slice(0, 12) };
}

/** Markdown for what a digest found worth reading: the frequent warnings and errors, and the stray lines. */
export function digestNotes(label: string, d: LogDigest): string[] {
  const out: string[] = [];
  if (d.top.length > 0)
    out.push(
      `${label}, most frequent warnings and errors:`,
      '',
      ...d.top.map((m) => `- ${m.replaceAll('`', "'")}`),
      '',
    );
  if (d.strayCount > 0)
    out.push(
      `${label}, stderr besides its log (${d.strayCount} lines; the first ${d.stray.length}):`,
      '',
      '```',
      ...d.stray,
      '```',
      '',
    );
  return out;
}
