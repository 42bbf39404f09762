import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * What a process holds, counted from outside: the detectors of the one-handle test (test/app/one-handle.test.ts),
 * themselves tested against a process that opens a second handle and a second pool on purpose
 * (test/app/resource-census.test.ts).
 */

/** The open file descriptors of `pid` whose link ends in `suffix` (what `ls -l /proc/$PID/fd | grep -c` counts). */
export const fdsOn = (pid: number, suffix: string): number =>
  readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`).endsWith(suffix);
    } catch {
      return false; // closed meanwhile
    }
  }).length;

/** The environment that makes a Node child count its HTTP pools into `file` as it exits (http-pool-census.mjs). */
export const poolCensusEnv = (file: string, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv => ({
  NODE_OPTIONS: `${env.NODE_OPTIONS ?? ''} --import=${new URL('./http-pool-census.mjs', import.meta.url).href}`.trim(),
  HTTP_POOL_CENSUS: file,
});

export interface PoolCensus {
  /** undici Agents that sent at least one request. */
  readonly pools: number;
  /** Requests created in the process (undici's and Node's fetch's). */
  readonly requests: number;
  /** Requests sent through those Agents. */
  readonly pooled: number;
}

/** The census a child wrote as it exited. */
export const readPoolCensus = (file: string): PoolCensus => JSON.parse(readFileSync(file, 'utf8')) as PoolCensus;
