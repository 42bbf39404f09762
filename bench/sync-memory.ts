/**
 * Peak RSS of `understudy sync` while mirroring ~100,000 records of one collection: pages are streamed into SQLite
 * one at a time, so memory stays flat whatever the collection size. Target: under 200 MB.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSimulator } from '../src/sim/start-simulator.js';

const peakKb = (pid: number): number => {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
};

export default async function bench(): Promise<string> {
  const startedSim = Date.now();
  const sim = await startSimulator({
    tenants: 1,
    records: 34_000,
    routes: 'full',
    maxLimit: 1000,
    readLimit: 0,
    writeLimit: 0,
  });
  const simMs = Date.now() - startedSim;
  const dir = mkdtempSync(join(tmpdir(), 'understudy-bench-'));
  try {
    const t = sim.tenants[0];
    if (!t) throw new Error('no tenant');
    const n = sim.controls.docs(t.slug, 'event-instances').length;
    const bin = fileURLToPath(new URL('../../bin/understudy', import.meta.url));
    const started = Date.now();
    const child = spawn(
      process.execPath,
      [
        bin,
        'sync',
        '--base-url',
        sim.url,
        '--tenant',
        t.slug,
        '--collection',
        'event-instances',
        '--db',
        join(dir, 'm.db'),
        '--json',
      ],
      { env: { ...process.env, PARTNERS_API_KEY: t.key, LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let peak = 0;
    const timer = setInterval(() => {
      if (child.pid) peak = Math.max(peak, peakKb(child.pid));
    }, 50);
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const code: number | null = await new Promise((resolve) => child.once('close', resolve));
    clearInterval(timer);
    const ms = Date.now() - started;
    const fetched = code === 0 ? (JSON.parse(out).tenants[0].collections[0].fetched as number) : 0;
    const mb = peak / 1024;
    return [
      '## Sync memory',
      '',
      `Simulator with ${n} event instances in one tenant (started in ${(simMs / 1000).toFixed(1)} s), page size 1000.`,
      `\`understudy sync --collection event-instances\` (exit ${code}) mirrored ${fetched} records in ${(ms / 1000).toFixed(1)} s`,
      `(${Math.round(fetched / (ms / 1000))} records/s end to end over HTTP) with a peak RSS of **${mb.toFixed(0)} MB**`,
      `(target < 200 MB: ${mb < 200 ? 'met' : 'NOT met'}).`,
    ].join('\n');
  } finally {
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
