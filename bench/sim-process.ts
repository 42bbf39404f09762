/**
 * `understudy sim` in a process of its own, as the upstream is in production: the workers' CPU then does not slow
 * the upstream's answers, nor its CPU theirs on the bench's event loop (this machine has two cores). Controlled
 * through its `/__sim/` admin routes.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import type { RequestLogEntry, SimCounters } from '../src/sim/start-simulator.js';
import type { JsonObject } from '../src/vocabulary/ids.js';

/** A simulator process: its URL, its tenants and keys (as it printed them) and its admin routes. */
export interface SimProcess {
  readonly url: string;
  /** Its process id, for /proc. */
  readonly pid: number;
  readonly tenants: { slug: string; key: string }[];
  /** The records of a collection as a published depth-0 read returns them. */
  docs(tenant: string, collection: string): Promise<JsonObject[]>;
  requestLog(): Promise<RequestLogEntry[]>;
  /** Reads, writes and 429s served, in total and by tenant, since the start or the last reset. */
  counters(): Promise<SimCounters>;
  /** Clears counters, the request log, faults and the rate-limit windows (not the data). */
  reset(): Promise<void>;
  close(): Promise<void>;
}

/** Starts `understudy sim --port 0 --tenants N ARGS` (node flags `nodeArgs`); resolves once it printed every key. */
export async function startSimProcess(
  args: readonly string[],
  tenants: number,
  nodeArgs: readonly string[] = [],
): Promise<SimProcess> {
  const bin = fileURLToPath(new URL('../../bin/understudy', import.meta.url));
  const child = spawn(
    process.execPath,
    [...nodeArgs, bin, 'sim', '--port', '0', '--tenants', String(tenants), ...args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stderr?.resume();
  const found: { slug: string; key: string }[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    let origin = '';
    child.stdout?.on('data', (d: Buffer) => {
      seen += d.toString();
      origin ||= /listening on (http:\/\/\S+)/.exec(seen)?.[1] ?? '';
      found.length = 0;
      for (const m of seen.matchAll(/^tenant (\S+) key (\S+)$/gm))
        found.push({ slug: m[1] as string, key: m[2] as string });
      if (origin && found.length === tenants) resolve(origin);
    });
    child.once('exit', () => reject(new Error(`understudy sim exited at start: ${seen.slice(-200)}`)));
  });
  child.stdout?.resume();
  const admin = async <T>(method: string, path: string): Promise<T> => {
    const res = await request(`${url}/__sim/${path}`, { method: method as 'GET' });
    return (await res.body.json()) as T;
  };
  return {
    url,
    pid: child.pid as number,
    tenants: found,
    docs: (tenant, collection) => admin('GET', `docs/${tenant}/${collection}`),
    requestLog: () => admin('GET', 'request-log'),
    counters: () => admin('GET', 'counters'),
    reset: async () => {
      await admin('POST', 'reset');
    },
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}
