import type { ChildProcess } from 'node:child_process';
import { type CliOptions, type CliResult, collect, spawnCli } from './run-cli.js';

// These helpers run the built CLI (bin/understudy runs dist/): `npm run build` first (`npm test` does).

/** A `bin/understudy` process running in the background; SIGKILLed when the test finishes if it still runs. */
export interface UnderstudyProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Resolves once the process has exited, with its code, signal and everything it printed. */
  readonly exited: Promise<CliResult>;
  /** What it has logged (stderr) so far. */
  log(): string;
  /** Resolves with the first line it logs that matches `re`; rejects when it exits first or after `timeoutMs`. */
  waitForLog(re: RegExp, timeoutMs?: number): Promise<string>;
  /** Sends `signal` (default SIGTERM) and resolves with the outcome once it has exited. */
  stop(signal?: NodeJS.Signals): Promise<CliResult>;
}

/** Starts `understudy …args` with `env` over the test's environment (`fileScoped`: see `CliOptions`). */
export function startUnderstudy(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  opts: Pick<CliOptions, 'fileScoped'> = {},
): UnderstudyProcess {
  const child = spawnCli([...args], { env, ...opts });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`understudy ${args[0]} did not start`);
  const exited = collect(child);
  let closed = false;
  child.once('close', () => {
    closed = true;
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  return {
    child,
    pid,
    exited,
    log: () => stderr,
    waitForLog: (re, timeoutMs = 30_000) => logLine(child, () => stderr, re, { timeoutMs, closed: () => closed }),
    stop: (signal = 'SIGTERM') => {
      child.kill(signal);
      return exited;
    },
  };
}

/** `understudy worker --config <config> …args`; `opsPort()` resolves once `--http` listens. */
export function startWorker(config: string, args: readonly string[], env: NodeJS.ProcessEnv) {
  const p = startUnderstudy(['worker', '--config', config, ...args], env);
  const opsPort = async () =>
    JSON.parse(await p.waitForLog(/ops endpoints listening/)) as { host: string; port: number };
  return { ...p, opsPort };
}

/** `understudy sync …args`. */
export const startSync = (args: readonly string[], env: NodeJS.ProcessEnv): UnderstudyProcess =>
  startUnderstudy(['sync', ...args], env);

function logLine(
  child: ChildProcess,
  log: () => string,
  re: RegExp,
  { timeoutMs, closed }: { readonly timeoutMs: number; readonly closed: () => boolean },
): Promise<string> {
  return new Promise((resolve, reject) => {
    const found = () =>
      log()
        .split('\n')
        .find((l) => re.test(l));
    const finish = (settle: () => void) => {
      clearTimeout(timer);
      child.stderr?.off('data', onData);
      child.off('close', onClose);
      settle();
    };
    const onData = () => {
      const line = found();
      if (line !== undefined) finish(() => resolve(line));
    };
    const onClose = () => {
      const line = found();
      finish(() => (line === undefined ? reject(new Error(`exited before logging ${re}:\n${log()}`)) : resolve(line)));
    };
    const timer = setTimeout(
      () => finish(() => reject(new Error(`nothing logged matched ${re} in ${timeoutMs} ms:\n${log()}`))),
      timeoutMs,
    );
    child.stderr?.on('data', onData);
    child.once('close', onClose);
    if (closed()) onClose();
    else onData();
  });
}
