/**
 * The `understudy worker` processes of one fleet run: started on one config, each ready (`/readyz` 200) before
 * the run begins, their CPU and the machine's read from /proc, and their stop (SIGTERM) with what they logged.
 */
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import {
  freePort,
  type LogDigest,
  logDigest,
  procSample,
  sleep,
  spawnUnderstudy,
  stopChild,
} from './understudy-child.js';

const READY_TIMEOUT_MS = 120_000;

/** CPU time so far: the workers' and the simulator's (seconds, user + system) and the machine's (busy, total ticks). */
export interface CpuMark {
  readonly workersS: number;
  readonly simS: number;
  /** CPU seconds so far of each PostgreSQL server process and of each redis-server, by pid. */
  readonly postgres: ReadonlyMap<number, number>;
  readonly redis: ReadonlyMap<number, number>;
  /** This process's (the bench's: its queue polling and lock sampling). */
  readonly benchS: number;
  readonly busy: number;
  readonly total: number;
}

/** Cores the workers and the simulator used over a span, and the share of the machine's CPU that was busy. */
export interface CpuUse {
  readonly workerCores: number;
  readonly simCores: number;
  readonly postgresCores: number;
  readonly redisCores: number;
  readonly benchCores: number;
  readonly machineBusy: number;
}

/**
 * CPU seconds the processes of `b` used since `a`. One that exited in between is not counted: the workers' backends
 * live until the workers stop.
 */
const grown = (a: ReadonlyMap<number, number>, b: ReadonlyMap<number, number>): number =>
  [...b].reduce((s, [pid, cpuS]) => s + cpuS - (a.get(pid) ?? 0), 0);

export const cpuBetween = (a: CpuMark, b: CpuMark, wallS: number): CpuUse => ({
  workerCores: (b.workersS - a.workersS) / wallS,
  simCores: (b.simS - a.simS) / wallS,
  postgresCores: grown(a.postgres, b.postgres) / wallS,
  redisCores: grown(a.redis, b.redis) / wallS,
  benchCores: (b.benchS - a.benchS) / wallS,
  machineBusy: (b.busy - a.busy) / Math.max(1, b.total - a.total),
});

/** How the workers stopped, and what they logged. */
export interface WorkersStopped {
  readonly exits: readonly string[];
  readonly logs: readonly LogDigest[];
}

export interface FleetWorkers {
  cpu(): CpuMark;
  /** SIGTERM to each (SIGKILL after 15 s); idempotent. */
  stop(): Promise<WorkersStopped>;
}

/** The machine's busy and total CPU ticks (/proc/stat: all but idle and iowait are busy). */
function machineTicks(): { busy: number; total: number } {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1, 9).map(Number);
  const total = fields.reduce((s, x) => s + x, 0);
  return { busy: total - (fields[3] ?? 0) - (fields[4] ?? 0), total };
}

/** The CPU seconds of every process of this machine named `name` (`postgres`: the server and its backends), by pid. */
function cpuOfNamed(name: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== name) continue;
    } catch {
      continue;
    }
    const cpuS = procSample(Number(entry))?.cpuS;
    if (cpuS !== undefined) out.set(Number(entry), cpuS);
  }
  return out;
}

/** Waits for a worker's `/readyz` to answer 200; throws with its log's tail when it exits or never gets there. */
async function ready(child: ChildProcess, port: number, log: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null || Date.now() > deadline) {
      const why = child.exitCode !== null ? `exited ${child.exitCode}` : 'was not ready in time';
      throw new Error(`a fleet worker ${why}: ${readFileSync(log, 'utf8').slice(-400)}`);
    }
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return;
    await sleep(100);
  }
}

/**
 * Starts `count` workers on `config`, their stderr in `${logPrefix}-N.err`; resolves once all are ready. `simPid`
 * is the upstream's process, whose CPU `cpu()` reads too.
 */
export async function startFleetWorkers(
  config: string,
  count: number,
  env: NodeJS.ProcessEnv,
  logPrefix: string,
  simPid: number,
): Promise<FleetWorkers> {
  const children: ChildProcess[] = [];
  const logs: string[] = [];
  let stopping: Promise<WorkersStopped> | undefined;
  const stop = (): Promise<WorkersStopped> => {
    stopping ??= Promise.all(children.map((c) => stopChild(c))).then((s) => ({
      exits: s.map((x) => `exit ${x.code ?? 'killed'} in ${(x.ms / 1000).toFixed(1)} s`),
      logs: logs.map((l) => logDigest(l)),
    }));
    return stopping;
  };
  try {
    for (let i = 0; i < count; i++) {
      const port = await freePort();
      const log = `${logPrefix}-${i}.err`;
      const child = spawnUnderstudy(['worker', '--config', config, '--http', String(port)], env, log);
      children.push(child);
      logs.push(log);
      await ready(child, port, log);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  const cpu = (): CpuMark => ({
    workersS: children.reduce((s, c) => s + (procSample(c.pid as number)?.cpuS ?? 0), 0),
    simS: procSample(simPid)?.cpuS ?? 0,
    postgres: cpuOfNamed('postgres'),
    redis: cpuOfNamed('redis-server'),
    benchS: (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
    ...machineTicks(),
  });
  return { cpu, stop };
}
