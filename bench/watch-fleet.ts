/**
 * Watch at fleet scale (issue 26): 1,000 tenants of the simulator, one key each and a few records per collection,
 * watched by one `understudy worker`. Every key stays within its budget share (60% of 100 reads a minute), the
 * worker's RSS stays under 300 MB, and a random edit anywhere in the fleet reaches the mirror within 2 minutes (p95).
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Prng } from '../src/sim/prng.js';
import { type Simulator, startSimulator } from '../src/sim/start-simulator.js';
import { type CollectionSlug, collectionNamed } from '../src/vocabulary/collections.js';
import { envNumber, MUTATED } from './live-load.js';
import { redisForBench } from './shared-budget.js';
import {
  type ChangeRow,
  digestNotes,
  freePort,
  type LogDigest,
  logDigest,
  procSample,
  quantile,
  readChanges,
  sleep,
  spawnUnderstudy,
  sqlRows,
  stopChild,
  understudy,
} from './understudy-child.js';

const TENANTS = Math.round(envNumber('BENCH_FLEET_TENANTS', 1000));
/** The worker's start before the edits, the edits' span, and the wait after the last edit before the change log is read. */
const WARM_MS = envNumber('BENCH_FLEET_WARM_S', 60) * 1000;
const LOAD_MS = envNumber('BENCH_FLEET_LOAD_S', 240) * 1000;
const TAIL_MS = envNumber('BENCH_FLEET_TAIL_S', 150) * 1000;
const EDIT_EVERY_MS = envNumber('BENCH_FLEET_EDIT_S', 3) * 1000;
const SAMPLE_MS = 5_000;
const MINUTE_MS = 60_000;
const READS_PER_MINUTE = 100;
const MAX_SHARE = 0.6;

/** One edit: when it was made, what, and the record's new `updatedAt` upstream. */
interface Edit {
  readonly tenant: string;
  readonly collection: CollectionSlug;
  readonly id: string;
  readonly updatedAt: string;
}

/** A sample of the worker's process. */
interface Sample {
  readonly at: number;
  readonly rss: number;
  readonly cpuS: number;
}

/** Tries at one edit of a published record: the simulator edits draft-only records too, which no published read sees. */
const TRIES = 5;

/** Edits a random record of a random tenant and collection, else the next pick; null when every try hit a draft. */
function editOne(sim: Simulator, prng: Prng): Edit | null {
  for (let i = 0; i < TRIES; i++) {
    const tenant = prng.pick(sim.tenants).slug;
    const collection = prng.pick(MUTATED);
    const id = sim.controls.mutate({ tenant, collection, edits: 1 }).edited[0];
    const doc = id === undefined ? undefined : sim.controls.docs(tenant, collection).find((d) => String(d.id) === id);
    if (id !== undefined && doc) return { tenant, collection, id, updatedAt: String(doc.updatedAt) };
  }
  return null;
}

/** Edits a published record somewhere in the fleet every few seconds until `until`. */
async function editFleet(sim: Simulator, until: number, prng: Prng): Promise<Edit[]> {
  const edits: Edit[] = [];
  for (let next = Date.now(); next < until; next += EDIT_EVERY_MS) {
    await sleep(Math.max(0, next - Date.now()));
    const edit = editOne(sim, prng);
    if (edit) edits.push(edit);
  }
  return edits;
}

/** Edit-to-mirror (s) of each edit: its first change row at or after its `updatedAt`; Infinity when none came. */
function lagsOf(edits: readonly Edit[], changes: readonly ChangeRow[]): number[] {
  return edits.map((e) => {
    const row = changes.find(
      (c) =>
        c.tenant === e.tenant &&
        collectionNamed(c.collection) === e.collection &&
        c.id === e.id &&
        ['insert', 'update', 'revive'].includes(c.kind) &&
        c.updated_at_after &&
        Date.parse(c.updated_at_after) >= Date.parse(e.updatedAt),
    );
    return row ? (Date.parse(row.at) - Date.parse(e.updatedAt)) / 1000 : Number.POSITIVE_INFINITY;
  });
}

/** Reads of every key in each whole minute since the counters' reset: the simulator's counters, taken every minute. */
class MinuteReads {
  private last = new Map<string, number>();
  readonly minutes: Map<string, number>[] = [];

  constructor(private readonly sim: Simulator) {}

  take(): void {
    const now = this.sim.controls.counters().tenants;
    const minute = new Map<string, number>();
    for (const t of this.sim.tenants) {
      const reads = now[t.slug]?.reads ?? 0;
      minute.set(t.slug, reads - (this.last.get(t.slug) ?? 0));
      this.last.set(t.slug, reads);
    }
    this.minutes.push(minute);
  }

  /** The most reads any key made in one minute, and how many keys ever went over `cap` in one. */
  peak(cap: number): { max: number; over: number } {
    let max = 0;
    const over = new Set<string>();
    for (const m of this.minutes)
      for (const [slug, n] of m) {
        max = Math.max(max, n);
        if (n > cap) over.add(slug);
      }
    return { max, over: over.size };
  }
}

/** The sum of a metric's samples by one label's value, in a Prometheus text exposition. */
function metricBy(text: string, name: string, label: string): Map<string, number> {
  const out = new Map<string, number>();
  const re = new RegExp(`${label}="([^"]*)"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const key = re.exec(line)?.[1] ?? '';
    out.set(key, (out.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}

interface FleetResult {
  readonly generateS: number;
  readonly syncS: number;
  readonly syncReads: number;
  readonly syncLimited: number;
  readonly watched: { n: number; tenants: number };
  readonly samples: readonly Sample[];
  /** Worker and simulator CPU over the measured span (cores). */
  readonly workerCores: number;
  readonly simCores: number;
  readonly lags: readonly number[];
  readonly minutes: MinuteReads;
  /** Each key's reads per minute over the whole measured span. */
  readonly perKey: readonly number[];
  readonly rateLimited: number;
  readonly probes: Map<string, number>;
  readonly workerExit: string;
  readonly log: LogDigest;
}

/** Config for the fleet: every tenant on its own key (K0001…), watched, no incremental schedule. */
function fleetConfig(sim: Simulator, db: string, redisUrl: string, env: NodeJS.ProcessEnv): object {
  const schedule = { incrementalEveryMinutes: 0, fullCron: '0 3 * * *', timezone: 'UTC' };
  return {
    baseUrl: sim.url,
    database: db,
    redis: { url: redisUrl, prefix: `bench-${randomUUID()}` },
    watch: true,
    tenants: sim.tenants.map((t, i) => {
      const name = `K${String(i + 1).padStart(4, '0')}`;
      env[name] = t.key;
      return { slug: t.slug, apiKeyEnv: name, schedule };
    }),
  };
}

/** Samples the worker's RSS and CPU every few seconds until stopped. */
function sampler(pid: number): { samples: Sample[]; stop: () => void } {
  const samples: Sample[] = [];
  const take = () => {
    const s = procSample(pid);
    if (s) samples.push({ at: Date.now(), ...s });
  };
  take();
  const timer = setInterval(take, SAMPLE_MS);
  return { samples, stop: () => clearInterval(timer) };
}

async function runFleet(redisUrl: string): Promise<FleetResult> {
  const g0 = performance.now();
  const sim = await startSimulator({
    seed: 29,
    records: 3,
    tenants: TENANTS,
    aroundDay: Date.now(),
    readLimit: READS_PER_MINUTE,
    writeLimit: 20,
    windowMs: MINUTE_MS,
    maxLimit: 100,
  });
  const generateS = (performance.now() - g0) / 1000;
  const dir = mkdtempSync(join(tmpdir(), 'understudy-bench-'));
  const db = join(dir, 'mirror.db');
  const cfg = join(dir, 'config.json');
  const workerLog = join(dir, 'worker.err');
  const env: NodeJS.ProcessEnv = { ...process.env, REDIS_URL: redisUrl };
  writeFileSync(cfg, JSON.stringify(fleetConfig(sim, db, redisUrl, env)));
  let worker: ChildProcess | undefined;
  let sampling: ReturnType<typeof sampler> | undefined;
  try {
    const first = await understudy(['sync', '--config', cfg], env);
    if (first.code !== 0)
      throw new Error(
        `first sync exited ${first.code} after ${(first.ms / 1000).toFixed(0)} s: ${first.err.slice(-300)}`,
      );
    const syncCounters = sim.controls.counters().total;
    const s0 = (await sqlRows<{ s: number }>(db, 'SELECT max(seq) AS s FROM changes', env))[0]?.s ?? 0;
    const port = await freePort();
    worker = spawnUnderstudy(['worker', '--config', cfg, '--http', String(port)], env, workerLog);
    const pid = worker.pid as number;
    sampling = sampler(pid);
    await sleep(WARM_MS);
    if (worker.exitCode !== null) throw new Error(`worker exited ${worker.exitCode} at start`);

    sim.controls.reset();
    const minutes = new MinuteReads(sim);
    const everyMinute = setInterval(() => minutes.take(), MINUTE_MS);
    const t0 = Date.now();
    const cpu0 = procSample(pid);
    const sim0 = process.cpuUsage();
    const edits = await editFleet(sim, t0 + LOAD_MS, new Prng(1000));
    await sleep(TAIL_MS);
    clearInterval(everyMinute);
    const span = Date.now() - t0;
    const cpu1 = procSample(pid);
    const simCpu = process.cpuUsage(sim0);
    const counters = sim.controls.counters();
    const perKey = sim.tenants.map((t) => ((counters.tenants[t.slug]?.reads ?? 0) * MINUTE_MS) / span);

    const lags = lagsOf(edits, await readChanges(db, s0, env));
    const watched = (
      await sqlRows<{ n: number; tenants: number }>(
        db,
        'SELECT count(*) AS n, count(DISTINCT tenant) AS tenants FROM watch_state',
        env,
      )
    )[0] ?? { n: 0, tenants: 0 };
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    sampling.stop();
    const running = worker.exitCode === null;
    const stopped = await stopChild(worker);
    return {
      generateS,
      syncS: first.ms / 1000,
      syncReads: syncCounters.reads,
      syncLimited: syncCounters.rateLimited,
      watched,
      samples: sampling.samples,
      workerCores: cpu0 && cpu1 ? (cpu1.cpuS - cpu0.cpuS) / (span / 1000) : Number.NaN,
      simCores: (simCpu.user + simCpu.system) / 1e6 / (span / 1000),
      lags,
      minutes,
      perKey,
      rateLimited: counters.total.rateLimited,
      probes: metricBy(metrics, 'understudy_watch_probes_total', 'outcome'),
      workerExit: running
        ? `exit ${stopped.code} on SIGTERM in ${(stopped.ms / 1000).toFixed(1)} s`
        : `died (exit ${worker.exitCode})`,
      log: logDigest(workerLog),
    };
  } finally {
    sampling?.stop();
    if (worker) await stopChild(worker);
    await sim.close();
    if (!process.env.BENCH_KEEP) rmSync(dir, { recursive: true, force: true });
  }
}

const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '–');
const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
const met = (ok: boolean) => (ok ? 'met' : '**not met**');

function report(r: FleetResult): string {
  const rss = r.samples.map((s) => s.rss);
  const rssMax = Math.max(...rss);
  const p95 = quantile(r.lags, 0.95);
  const lost = r.lags.filter((x) => !Number.isFinite(x)).length;
  const cap = READS_PER_MINUTE * MAX_SHARE;
  const peak = r.minutes.peak(cap);
  const probes = [...r.probes].map(([k, n]) => `${k} ${n.toLocaleString('en')}`).join(', ');
  const rows = [
    '| measure | figure | target |',
    '|---|---:|---|',
    `| tenants (one key each) / collections watched | ${TENANTS.toLocaleString('en')} / ${r.watched.n.toLocaleString('en')} (${r.watched.tenants.toLocaleString('en')} tenants in \`watch_state\`) | |`,
    `| first mirror (\`understudy sync --config\`, every tenant) | ${f1(r.syncS)} s, ${r.syncReads.toLocaleString('en')} reads, ${r.syncLimited} 429s | |`,
    `| worker RSS: max / median / last (${rss.length} samples, every ${SAMPLE_MS / 1000} s) | ${mb(rssMax)} / ${mb(quantile(rss, 0.5))} / ${mb(rss.at(-1) ?? Number.NaN)} MB | < 300 MB: ${met(rssMax < 300 * 2 ** 20)} |`,
    `| edit-to-mirror: p50 / p95 / max (${r.lags.length} edits, ${lost} never mirrored) | ${f1(quantile(r.lags, 0.5))} / ${f1(p95)} / ${f1(Math.max(...r.lags))} s | p95 ≤ 120 s: ${met(p95 <= 120)} |`,
    `| reads per key in one minute: most of any key (${r.minutes.minutes.length} whole minutes) | ${peak.max} (${peak.over} keys over ${cap}) | ≤ ${cap}: ${met(peak.max <= cap)} |`,
    `| reads per key per minute over the span: median / max key | ${f1(quantile(r.perKey, 0.5))} / ${f1(Math.max(...r.perKey))} | median ≤ 20 (\`idleShare\`; most keys see no edit): ${met(quantile(r.perKey, 0.5) <= 20)} |`,
    `| 429s | ${r.rateLimited} | 0: ${met(r.rateLimited === 0)} |`,
    `| worker CPU / simulator (bench process) CPU, cores | ${r.workerCores.toFixed(2)} / ${r.simCores.toFixed(2)} | |`,
    `| watch turns by outcome (\`understudy_watch_probes_total\`) | ${probes || 'none'} | |`,
    `| worker stop / warnings / errors logged / other stderr lines | ${r.workerExit} / ${r.log.warn} / ${r.log.error} / ${r.log.strayCount} | |`,
  ];
  return [
    '## Watch at fleet scale (issue 26)',
    '',
    `An in-process simulator with ${TENANTS.toLocaleString('en')} tenants (generated in ${f1(r.generateS)} s; 3 records a`,
    "collection scale, about 33 records a tenant; the spec's limits per key: 100 reads a minute, pages of 100), a",
    'config giving each tenant its own key (`K0001`…) with `"watch": true` and no incremental schedule, a first',
    '`understudy sync --config`, then one `understudy worker` (a redis-server of its own). After',
    `${WARM_MS / 1000} s, every ${EDIT_EVERY_MS / 1000} s for ${LOAD_MS / 1000} s a random record of a random tenant and collection is edited`,
    '(`/__sim/mutate`; when the record it edits is a draft only, which no published read sees, another pick, up to',
    `${TRIES}), then ${TAIL_MS / 1000} s more with no edits. Edit-to-mirror is the first change row of the record at or`,
    'after its new `updatedAt` (`understudy changes --json`) minus that `updatedAt`; an edit with none counts as never',
    "mirrored (infinite). Reads per key are the simulator's counters, taken every whole minute from the first edit",
    "on. RSS and CPU from the worker's /proc, every 5 s from its start.",
    '',
    ...rows,
    '',
    ...digestNotes('Worker', r.log),
    `This machine has ${cpus().length} cores: the simulator (this process), the worker, \`understudy sync\` and Redis share`,
    `them (1-minute load average at the end: ${loadavg()[0]?.toFixed(1)}).`,
  ].join('\n');
}

export default async function bench(): Promise<string> {
  const redis = await redisForBench();
  try {
    return report(await runFleet(redis.url));
  } finally {
    await redis.stop();
  }
}
