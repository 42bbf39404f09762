/**
 * The `understudy worker` processes of one fleet run: started on one config, each ready (`/readyz` 200) before
 * the run begins, their CPU and the machine's read from /proc, and their stop (SIGTERM) with what they logged.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
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

/** CPU time so far: the workers' (seconds, user + system) and the whole machine's (busy and total ticks). */
export interface CpuMark {
  readonly workersS: number;
  readonly busy: number;
  readonly total: number;
}

/** Cores the workers used over a span, and the share of the machine's CPU that was busy. */
export interface CpuUse {
  readonly workerCores: number;
  readonly machineBusy: number;
}

export const cpuBetween = (a: CpuMark, b: CpuMark, wallS: number): CpuUse => ({
  workerCores: (b.workersS - a.workersS) / wallS,
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

/** Starts `count` workers on `config`, their stderr in `${logPrefix}-N.err`; resolves once all are ready. */
export async function startFleetWorkers(
  config: string,
  count: number,
  env: NodeJS.ProcessEnv,
  logPrefix: string,
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
    ...machineTicks(),
  });
  return { cpu, stop };
}
