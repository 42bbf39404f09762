/**
 * Live freshness (issue 26): `understudy worker` with `"watch": true` against the simulator with the spec's limits
 * (100 reads a minute per key, pages of 100), two tenants; a mutator edits one collection every 2 s, and every 15 s
 * another collection gets an edit, or a create and a hard delete. Edit-to-mirror and delete-to-tombstone from the
 * change log, the reads per key per minute under load and when quiet, the 429s, and every record compared with the
 * upstream at the end. The same sequence with today's schedule (no watch, an incremental sync every minute) on a
 * fresh simulator and mirror, in the same run. Modelled on the outside check `checks/freshness`.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Prng } from '../src/sim/prng.js';
import { type Simulator, startSimulator } from '../src/sim/start-simulator.js';
import { type CollectionSlug, collectionNamed, tableFor } from '../src/vocabulary/collections.js';
import { envNumber, MIRRORED, MUTATED } from './live-load.js';
import { redisForBench } from './shared-budget.js';
import {
  type ChangeRow,
  digestNotes,
  freePort,
  type LogDigest,
  logDigest,
  quantile,
  readChanges,
  sleep,
  spawnUnderstudy,
  sqlRows,
  stopChild,
  understudy,
} from './understudy-child.js';

const seconds = (name: string, dflt: number): number => envNumber(name, dflt) * 1000;
/** How long the load lasts, the settling after it, the quiet window, and the worker's start before the load. */
const LOAD_MS = seconds('BENCH_FRESH_LOAD_S', 180);
const SETTLE_MS = seconds('BENCH_FRESH_SETTLE_S', 60);
const QUIET_MS = seconds('BENCH_FRESH_QUIET_S', 60);
const WARM_MS = seconds('BENCH_FRESH_WARM_S', 25);
const SCATTER_MS = 15_000;
const HOT: CollectionSlug = 'event-instances';

interface Mode {
  readonly name: string;
  readonly watch: boolean;
  readonly everyMinutes: number;
}
const MODES: readonly Mode[] = [
  { name: 'watch', watch: true, everyMinutes: 0 },
  { name: 'schedule, 1/min', watch: false, everyMinutes: 1 },
];

/** One scattered mutation: when it was made and what the simulator answered. */
interface Act {
  readonly at: number;
  readonly tenant: string;
  readonly collection: CollectionSlug;
  readonly deleted: readonly string[];
}

interface Lags {
  readonly hot: number[];
  /** The hot collection's, its first minute included (while its probe interval comes down from the idle one). */
  readonly hotAll: number[];
  readonly all: number[];
  readonly deletes: number[];
  readonly missingDeletes: number;
}

interface Compare {
  readonly records: number;
  readonly missing: number;
  readonly stale: number;
  readonly ghost: number;
}

interface ModeResult {
  readonly mode: Mode;
  readonly syncS: number;
  readonly lags: Lags;
  /** Reads per minute of each key, under load and when quiet. */
  readonly load: readonly number[];
  readonly quiet: readonly number[];
  readonly rateLimited: number;
  readonly compare: Compare;
  readonly metricCount: number;
  /** The hot collection's probe interval (s), every 15 s of the load (watch only). */
  readonly intervals: readonly number[];
  readonly workerExit: string;
  readonly log: LogDigest;
}

/** Edit-to-mirror (`at` minus `updated_at_after`) of every published insert, update and revive; deletes by id. */
function lagsOf(
  changes: readonly ChangeRow[],
  acts: readonly Act[],
  hotTenant: string,
  hot0: number,
  hotFrom: number,
): Lags {
  const hot: number[] = [];
  const hotAll: number[] = [];
  const all: number[] = [];
  for (const c of changes) {
    if (c.variant && c.variant !== 'published') continue;
    if (!['insert', 'update', 'revive'].includes(c.kind) || !c.updated_at_after) continue;
    const lag = (Date.parse(c.at) - Date.parse(c.updated_at_after)) / 1000;
    if (!Number.isFinite(lag)) continue;
    all.push(lag);
    if (c.tenant !== hotTenant || collectionNamed(c.collection) !== HOT) continue;
    const at = Date.parse(c.updated_at_after);
    if (at >= hot0) hotAll.push(lag);
    if (at >= hotFrom) hot.push(lag);
  }
  const deletes: number[] = [];
  let missingDeletes = 0;
  for (const a of acts)
    for (const id of a.deleted) {
      const d = changes.find(
        (c) =>
          c.kind === 'delete' && c.id === id && c.tenant === a.tenant && collectionNamed(c.collection) === a.collection,
      );
      if (d) deletes.push((Date.parse(d.at) - a.at) / 1000);
      else missingDeletes++;
    }
  return { hot, hotAll, all, deletes, missingDeletes };
}

/** Every record of every collection of each tenant against the upstream: missing, stale (another updatedAt), ghost. */
async function compareAll(sim: Simulator, db: string, env: NodeJS.ProcessEnv): Promise<Compare> {
  let records = 0;
  let missing = 0;
  let stale = 0;
  let ghost = 0;
  for (const t of sim.tenants)
    for (const c of MIRRORED) {
      const rows = await sqlRows<{ id: string; updated_at: string | null }>(
        db,
        `SELECT id, updated_at FROM ${tableFor(c)} WHERE tenant = '${t.slug}' AND deleted_at IS NULL`,
        env,
      );
      const mine = new Map(rows.map((r) => [String(r.id), r.updated_at]));
      for (const d of sim.controls.docs(t.slug, c)) {
        records++;
        const key = String(c === 'media' && d.filename != null ? d.filename : d.id);
        const m = mine.get(key);
        if (m === undefined) missing++;
        else if (Date.parse(String(m)) !== Date.parse(String(d.updatedAt))) stale++;
        mine.delete(key);
      }
      ghost += mine.size;
    }
  return { records, missing, stale, ghost };
}

/** Reads per minute of each tenant's key since the counters were last reset, `ms` ago. */
const readsPerMinute = (sim: Simulator, ms: number): number[] => {
  const counters = sim.controls.counters();
  return sim.tenants.map((t) => ((counters.tenants[t.slug]?.reads ?? 0) * 60_000) / ms);
};

/** The 429s the simulator answered since its last reset; then resets its counters and windows. */
const takeLimited = (sim: Simulator): number => {
  const n = sim.controls.counters().total.rateLimited;
  sim.controls.reset();
  return n;
};

/** The hot collection's probe interval as watch last wrote it (`watch_state`), in seconds; NaN without one. */
async function hotInterval(db: string, tenant: string, env: NodeJS.ProcessEnv): Promise<number> {
  const rows = await sqlRows<{ ms: number }>(
    db,
    `SELECT interval_ms AS ms FROM watch_state WHERE tenant = '${tenant}' AND collection = '${HOT}'`,
    env,
  ).catch(() => []);
  return (rows[0]?.ms ?? Number.NaN) / 1000;
}

/**
 * The scattered load: every 15 s, alternating tenants, a collection edited, or every third time a create and a
 * delete; `tick` runs after each (the hot collection's interval is sampled there).
 */
async function scatter(sim: Simulator, t0: number, prng: Prng, tick: () => Promise<void>): Promise<Act[]> {
  const acts: Act[] = [];
  for (let i = 1; Date.now() - t0 < LOAD_MS; i++) {
    const tenant = sim.tenants[i % 2]?.slug as string;
    const collection = prng.pick(MUTATED);
    const spec = i % 3 === 0 ? { creates: 1, deletes: 1 } : { edits: 1 };
    const at = Date.now();
    const r = sim.controls.mutate({ tenant, collection, ...spec });
    acts.push({ at, tenant, collection, deleted: r.deleted });
    await tick();
    await sleep(Math.max(0, t0 + i * SCATTER_MS - Date.now()));
  }
  return acts;
}

/** The sum of a metric's samples in a Prometheus text exposition. */
const metricSum = (text: string, name: string): number =>
  text
    .split('\n')
    .filter((l) => l.startsWith(name))
    .reduce((s, l) => s + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);

async function runMode(mode: Mode, redisUrl: string): Promise<ModeResult> {
  const sim = await startSimulator({
    seed: 23,
    records: 60,
    tenants: 2,
    aroundDay: Date.now(),
    readLimit: 100,
    writeLimit: 20,
    windowMs: 60_000,
    maxLimit: 100,
  });
  const dir = mkdtempSync(join(tmpdir(), 'understudy-bench-'));
  const db = join(dir, 'mirror.db');
  const cfg = join(dir, 'config.json');
  const workerLog = join(dir, 'worker.err');
  const env: NodeJS.ProcessEnv = { ...process.env, REDIS_URL: redisUrl };
  const schedule = { incrementalEveryMinutes: mode.everyMinutes, fullCron: '0 3 * * *', timezone: 'UTC' };
  writeFileSync(
    cfg,
    JSON.stringify({
      baseUrl: sim.url,
      database: db,
      redis: { url: redisUrl, prefix: `bench-${randomUUID()}` },
      ...(mode.watch ? { watch: true } : {}),
      tenants: sim.tenants.map((t, i) => {
        env[`FRESH_KEY_${i}`] = t.key;
        return { slug: t.slug, apiKeyEnv: `FRESH_KEY_${i}`, schedule };
      }),
    }),
  );
  let worker: ChildProcess | undefined;
  try {
    const first = await understudy(['sync', '--config', cfg], env);
    if (first.code !== 0) throw new Error(`first sync exited ${first.code}: ${first.err.slice(-300)}`);
    const s0 = Math.max(0, ...(await readChanges(db, 0, env)).map((c) => c.seq));
    const port = await freePort();
    worker = spawnUnderstudy(['worker', '--config', cfg, '--http', String(port)], env, workerLog);
    await sleep(WARM_MS);
    if (worker.exitCode !== null) throw new Error(`worker exited ${worker.exitCode} at start`);

    // 429s over the whole run: the counters are read before each reset.
    let rateLimited = takeLimited(sim);
    const t0 = Date.now();
    const hotTenant = sim.tenants[0]?.slug as string;
    sim.controls.startMutator({ tenant: hotTenant, collection: HOT, perSecond: 0.5, edits: 1 });
    const intervals: number[] = [];
    const sample = async () => {
      if (mode.watch) intervals.push(await hotInterval(db, hotTenant, env));
    };
    const acts = await scatter(sim, t0, new Prng(26), sample);
    sim.controls.stopMutator();
    const load = readsPerMinute(sim, Date.now() - t0);

    await sleep(SETTLE_MS);
    rateLimited += takeLimited(sim);
    const t2 = Date.now();
    await sleep(QUIET_MS);
    const quiet = readsPerMinute(sim, Date.now() - t2);
    rateLimited += takeLimited(sim);

    // The hot collection's pace needs a while to rise: its edits count from the first minute on (a third of a short run).
    const lags = lagsOf(await readChanges(db, s0, env), acts, hotTenant, t0, t0 + Math.min(60_000, LOAD_MS / 3));
    const compare = await compareAll(sim, db, env);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const running = worker.exitCode === null;
    const stopped = await stopChild(worker);
    return {
      mode,
      syncS: first.ms / 1000,
      lags,
      load,
      quiet,
      rateLimited,
      compare,
      intervals,
      metricCount: metricSum(metrics, 'understudy_freshness_seconds_count'),
      workerExit: running
        ? `SIGTERM: exit ${stopped.code} in ${(stopped.ms / 1000).toFixed(1)} s`
        : `died early (exit ${worker.exitCode})`,
      log: logDigest(workerLog),
    };
  } finally {
    if (worker) await stopChild(worker);
    await sim.close();
    if (!process.env.BENCH_KEEP) rmSync(dir, { recursive: true, force: true });
  }
}

const s = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '–');
const triple = (xs: readonly number[]) =>
  `${s(quantile(xs, 0.5))} / ${s(quantile(xs, 0.95))} / ${s(xs.length ? Math.max(...xs) : Number.NaN)} (${xs.length})`;
const perKey = (xs: readonly number[]) => `${s(Math.max(...xs))} (${xs.map(s).join(', ')})`;

function table(results: readonly ModeResult[]): string {
  const row = (label: string, f: (r: ModeResult) => string, target: string) =>
    `| ${label} | ${results.map(f).join(' | ')} | ${target} |`;
  return [
    `| measure | ${results.map((r) => r.mode.name).join(' | ')} | target (watch) |`,
    `|---|${results.map(() => '---:|').join('')}---|`,
    row('first mirror (`sync`), s', (r) => s(r.syncS), ''),
    row('hot collection: p50 / p95 / max s (edits)', (r) => triple(r.lags.hot), 'p95 ≤ 10 s'),
    row('hot collection from the first edit on: p50 / p95 / max s', (r) => triple(r.lags.hotAll), ''),
    row('every edit and create: p50 / p95 / max s (changes)', (r) => triple(r.lags.all), 'p95 ≤ 120 s'),
    row(
      'hard delete to tombstone: p95 s (found, missing)',
      (r) => `${s(quantile(r.lags.deletes, 0.95))} (${r.lags.deletes.length}, ${r.lags.missingDeletes} missing)`,
      'p95 ≤ 120 s, none missing',
    ),
    row('reads/min per key under load: max (each key)', (r) => perKey(r.load), '≤ 60'),
    row('reads/min per key when quiet: max (each key)', (r) => perKey(r.quiet), '≤ 20'),
    row('429s', (r) => String(r.rateLimited), '0'),
    row(
      'final compare: records / missing / stale / ghost',
      (r) => `${r.compare.records} / ${r.compare.missing} / ${r.compare.stale} / ${r.compare.ghost}`,
      'nothing missing, stale or ghost',
    ),
    row(
      "hot collection's probe interval every 15 s of load, s",
      (r) => (r.intervals.length > 0 ? r.intervals.map((x) => s(x)).join(', ') : 'no watch'),
      '',
    ),
    row('`understudy_freshness_seconds` observations', (r) => String(r.metricCount), '> 0'),
    row('worker stop', (r) => r.workerExit, 'exit 0'),
    row(
      'worker warnings / errors logged / other stderr lines',
      (r) => `${r.log.warn} / ${r.log.error} / ${r.log.strayCount}`,
      '',
    ),
  ].join('\n');
}

export default async function bench(): Promise<string> {
  const redis = await redisForBench();
  const results: ModeResult[] = [];
  try {
    for (const mode of MODES) results.push(await runMode(mode, redis.url));
  } finally {
    await redis.stop();
  }
  const [watch, base] = results as [ModeResult, ModeResult];
  const ratio = (f: (l: Lags) => number[]) => quantile(f(base.lags), 0.95) / quantile(f(watch.lags), 0.95);
  return [
    '## Live freshness (issue 26)',
    '',
    '`understudy worker` (its own process, a redis-server of its own) against an in-process simulator with the',
    "spec's limits (100 reads a minute per key, pages of 100; seed 23, 60 records a collection, programme around",
    'today), two tenants, each on its own key, after a first `understudy sync`. Load for',
    `${LOAD_MS / 1000} s: the simulator's mutator edits one event instance of the first tenant every 2 s (the hot`,
    'collection); every 15 s, alternating tenants, a random other collection gets an edit, or every third time a',
    `create and a hard delete. Then ${SETTLE_MS / 1000} s to settle, the counters reset, and ${QUIET_MS / 1000} s with`,
    "nothing changing (quiet reads). Edit-to-mirror is the change log's `at` minus the record's upstream `updatedAt`",
    "(`understudy changes --json`: published inserts, updates and revives; the hot collection's from the first",
    "minute of load on), delete-to-tombstone the delete row's `at` minus the time of the mutation. The final compare",
    "reads every live row of every collection (`understudy sql --json`) against the upstream's records.",
    '',
    `Both modes in the same run, each on a fresh simulator, mirror and Redis prefix: **watch** (config \`"watch": true\`,`,
    "`incrementalEveryMinutes` 0, the full pass at 03:00) and **today's schedule** (no watch, an incremental sync",
    'every minute). Percentiles are nearest-rank; the count of samples is in parentheses.',
    '',
    table(results),
    '',
    `Watch against the one-a-minute schedule, p95 over p95: hot collection ${s(ratio((l) => l.hot))}x, every change ${s(
      ratio((l) => l.all),
    )}x faster; hard deletes: ${watch.lags.missingDeletes} missed by watch, ${base.lags.missingDeletes} by the schedule`,
    '(an incremental pass cannot see a hard delete; the nightly full pass would).',
    '',
    ...results.flatMap((r) => digestNotes(`Worker (${r.mode.name})`, r.log)),
    `1-minute load average at the end: ${loadavg()[0]?.toFixed(1)} on ${cpus().length} cores; the simulator, the`,
    'worker and Redis share them.',
  ].join('\n');
}
