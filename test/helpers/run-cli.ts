import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { onTestFinished } from 'vitest';

export const BIN = fileURLToPath(new URL('../../bin/understudy', import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI (`node bin/understudy ...`) to completion. */
export function runCli(args: string[], opts: CliOptions & { input?: string } = {}): Promise<CliResult> {
  const child = spawnCli(args, opts);
  // A CLI may refuse its input before reading it all (e.g. a body far over the cap): EPIPE is then expected.
  child.stdin?.on('error', () => {});
  if (opts.input !== undefined) child.stdin?.end(opts.input);
  else child.stdin?.end();
  return collect(child);
}

export interface CliOptions {
  env?: NodeJS.ProcessEnv;
  /**
   * True for a process started in `beforeAll` (outside any test): the caller stops it (in `afterAll`) instead of
   * the end of the current test.
   */
  fileScoped?: boolean;
}

/** Starts the CLI in the background; killed when the test finishes (unless `fileScoped`). */
export function spawnCli(args: string[], opts: CliOptions = {}): ChildProcess {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info', ...opts.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  if (!opts.fileScoped)
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
  return child;
}

export function collect(child: ChildProcess): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}
