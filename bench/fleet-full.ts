/**
 * A fleet's nightly pass (issue 39 item 2): 200 tenants of the simulator (its own process), each on its own key
 * with about 2,000 records and the spec's limits (100 reads a minute per key, pages of 100), fully synced by 1, 2
 * and 4 `understudy worker` processes on one PostgreSQL mirror (a fresh database each run), and by 1 on SQLite. The
 * syncs are enqueued as a user does (`understudy sync --config … --enqueue --full`: one sync-tenant job per tenant,
 * which the workers fan out per collection). Per run: wall time, the upstream's bound, records committed per second,
 * and the writers' lock waits (`pg_stat_activity` every ~20 ms). Every record must arrive, or the bench fails.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { errorsFailTheCalls } from '../src/queue/error-listeners.js';
import { openSyncQueue, type SyncQueue } from '../src/queue/queues.js';
import { COLLECTIONS } from '../src/vocabulary/collections.js';
import { fleetReport, type RunResult, type RunSpec } from './fleet-full-report.js';
import { cpuBetween, type FleetWorkers, startFleetWorkers } from './fleet-workers.js';
import { envNumber } from './live-load.js';
import { type LockWaits, sampleLockWaits } from './lock-waits.js';
import { freshDatabase } from './postgres-database.js';
import { redisForBench } from './shared-budget.js';
import { type SimProcess, startSimProcess } from './sim-process.js';
import { sleep, sqlRows, understudy } from './understudy-child.js';

const TENANTS = Math.round(envNumber('BENCH_FLEET_TENANTS', 200));
const RECORDS = Math.round(envNumber('BENCH_FLEET_RECORDS', 2000));
/** The simulator's `--records` is per collection; a tenant gets about 11.5 published records per unit of it. */
const PER_COLLECTION = Math.max(1, Math.round(RECORDS / 11.5));
const CONCURRENCY = Math.round(envNumber('BENCH_FLEET_CONCURRENCY', 4));
const RUN_TIMEOUT_MS = 20 * 60_000;
const RUNS: readonly RunSpec[] = [
  { engine: 'PostgreSQL', workers: 1 },
  { engine: 'PostgreSQL', workers: 2 },
  { engine: 'PostgreSQL', workers: 4 },
  { engine: 'SQLite', workers: 1 },
];

/** Records by tenant, then by collection. */
type Counts = Map<string, Map<string, number>>;

/** What every run shares: the simulator, Redis, a folder, and the records the simulator seeded. */
interface Fleet {
  readonly sim: SimProcess;
  readonly redisUrl: string;
  readonly dir: string;
  readonly seeded: Counts;
}

/** The records each tenant's collections hold upstream (`/__sim/docs`), a few requests at a time. */
async function seededCounts(sim: SimProcess): Promise<Counts> {
  const out: Counts = new Map();
  const todo = sim.tenants.flatMap((t) => COLLECTIONS.map((c) => [t.slug, c] as const));
  const next = async (): Promise<void> => {
    for (let item = todo.pop(); item; item = todo.pop()) {
      const [tenant, collection] = item;
      const n = (await sim.docs(tenant, collection)).length;
      const byColl = out.get(tenant) ?? new Map<string, number>();
      byColl.set(collection, n);
      out.set(tenant, byColl);
    }
  };
  await Promise.all(Array.from({ length: 4 }, next));
  return out;
}

/** The mirror's live records by tenant and collection (`understudy sql --json`, one statement). */
async function mirroredCounts(db: string, env: NodeJS.ProcessEnv): Promise<Counts> {
  const statement = COLLECTIONS.map(
    (c) => `SELECT '${c}' AS collection, tenant, count(*) AS n FROM ${c.replaceAll('-', '_')}_live GROUP BY tenant`,
  ).join(' UNION ALL ');
  const rows = await sqlRows<{ collection: string; tenant: string; n: number }>(db, statement, env);
  const out: Counts = new Map();
  for (const r of rows) {
    const byColl = out.get(r.tenant) ?? new Map<string, number>();
    byColl.set(r.collection, Number(r.n));
    out.set(r.tenant, byColl);
  }
  return out;
}

/** Every tenant's collection whose mirrored count differs from the seeded one, as `tenant/collection got/seeded`. */
function missing(seeded: Counts, mirrored: Counts): string[] {
  const out: string[] = [];
  for (const [tenant, byColl] of seeded)
    for (const [collection, n] of byColl) {
      const got = mirrored.get(tenant)?.get(collection) ?? 0;
      if (got !== n) out.push(`${tenant}/${collection} ${got}/${n}`);
    }
  return out;
}

const total = (c: Counts): number =>
  [...c.values()].reduce((s, m) => s + [...m.values()].reduce((a, b) => a + b, 0), 0);

/** The states of a job not finished yet. */
const PENDING = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'paused'] as const;

/** Waits until no sync job is waiting, delayed or running any more; the jobs completed and failed. */
async function drained(queue: SyncQueue, deadline: number): Promise<{ completed: number; failed: number }> {
  for (;;) {
    const c = await queue.getJobCounts(...PENDING, 'completed', 'failed');
    const pending = PENDING.reduce((s, k) => s + (c[k] ?? 0), 0);
    const done = { completed: c.completed ?? 0, failed: c.failed ?? 0 };
    if (pending === 0 && done.completed + done.failed >= TENANTS) return done;
    if (Date.now() > deadline)
      throw new Error(`fleet-full: the sync queue did not drain in time: ${JSON.stringify(c)}`);
    await sleep(50);
  }
}

/** Deletes every key of a run's prefix (its queue, rate windows and locks), for a Redis the bench does not own. */
async function dropPrefix(redis: Redis, prefix: string): Promise<void> {
  for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 1000 }))
    if ((keys as string[]).length > 0) await redis.unlink(...(keys as string[]));
}

/** The run's mirror: a fresh PostgreSQL database, or a SQLite file in the bench's folder. */
async function mirrorFor(fleet: Fleet, spec: RunSpec): Promise<{ url: string; drop: () => Promise<void> }> {
  if (spec.engine === 'PostgreSQL') return freshDatabase('fleet');
  const path = join(fleet.dir, `mirror-${spec.workers}.db`);
  return { url: path, drop: async () => rmSync(path, { force: true }) };
}

/** The config every worker of a run reads: each tenant on its own key (`FLEET_KEY_n`), no schedules. */
function writeConfig(fleet: Fleet, database: string, prefix: string, env: NodeJS.ProcessEnv): string {
  const config = {
    baseUrl: fleet.sim.url,
    database,
    redis: { url: fleet.redisUrl, prefix },
    worker: { concurrency: CONCURRENCY },
    tenants: fleet.sim.tenants.map((t, i) => {
      env[`FLEET_KEY_${i}`] = t.key;
      return { slug: t.slug, apiKeyEnv: `FLEET_KEY_${i}` };
    }),
  };
  const path = join(fleet.dir, `config-${prefix}.json`);
  writeFileSync(path, JSON.stringify(config));
  return path;
}

/** Enqueues every tenant's full sync as a user does, and waits for the workers to finish them. */
async function syncFleet(cfg: string, env: NodeJS.ProcessEnv, queue: SyncQueue) {
  const t0 = performance.now();
  const enq = await understudy(['sync', '--config', cfg, '--enqueue', '--full', '--quiet'], env);
  if (enq.code !== 0) throw new Error(`sync --enqueue exited ${enq.code}: ${enq.err.slice(-300)}`);
  const jobs = await drained(queue, Date.now() + RUN_TIMEOUT_MS);
  return { wallS: (performance.now() - t0) / 1000, jobs };
}

/** One run: a fresh mirror and Redis prefix, the workers started and ready, then the fleet enqueued and drained. */
async function runOnce(fleet: Fleet, spec: RunSpec): Promise<RunResult> {
  await fleet.sim.reset();
  const mirror = await mirrorFor(fleet, spec);
  const prefix = `fleet-${randomUUID()}`;
  const env: NodeJS.ProcessEnv = { ...process.env, REDIS_URL: fleet.redisUrl, LOG_LEVEL: 'warn' };
  const cfg = writeConfig(fleet, mirror.url, prefix, env);
  const redis = new Redis(fleet.redisUrl, { maxRetriesPerRequest: null });
  const queue = openSyncQueue(redis, prefix, errorsFailTheCalls);
  let workers: FleetWorkers | undefined;
  try {
    workers = await startFleetWorkers(cfg, spec.workers, env, join(fleet.dir, prefix), fleet.sim.pid);
    const sampler =
      spec.engine === 'PostgreSQL'
        ? await sampleLockWaits(mirror.url, new URL(mirror.url).pathname.slice(1))
        : undefined;
    const cpu0 = workers.cpu();
    let synced: Awaited<ReturnType<typeof syncFleet>>;
    let lock: LockWaits | undefined;
    try {
      synced = await syncFleet(cfg, env, queue);
    } finally {
      lock = await sampler?.stop();
    }
    const cpu = cpuBetween(cpu0, workers.cpu(), synced.wallS);
    const counters = await fleet.sim.counters();
    const stopped = await workers.stop();
    const mirrored = await mirroredCounts(mirror.url, env);
    return {
      spec,
      wallS: synced.wallS,
      jobs: synced.jobs,
      reads: fleet.sim.tenants.map((t) => counters.tenants[t.slug]?.reads ?? 0),
      rateLimited: counters.total.rateLimited,
      records: total(mirrored),
      missing: missing(fleet.seeded, mirrored),
      cpu,
      stopped,
      ...(lock ? { lock } : {}),
    };
  } finally {
    await workers?.stop();
    await queue.close();
    await dropPrefix(redis, prefix);
    redis.disconnect();
    await mirror.drop();
  }
}

/** Fails the bench loudly (stderr, a non-zero exit, the section's "Not run") when a run lost records. */
function mustBeComplete(r: RunResult): void {
  if (r.missing.length === 0 && r.jobs.failed === 0) return;
  const what =
    `fleet-full: ${r.spec.workers} worker(s) on ${r.spec.engine}: ${r.missing.length} tenant collections differ ` +
    `from the seeded counts (mirrored/seeded: ${r.missing.slice(0, 8).join(', ')}), ${r.jobs.failed} jobs failed`;
  process.stderr.write(`${what}\n`);
  process.exitCode = 1;
  throw new Error(what);
}

export default async function bench(): Promise<string> {
  const g0 = performance.now();
  const sim = await startSimProcess(['--seed', '39', '--records', String(PER_COLLECTION), '--today'], TENANTS);
  const dir = mkdtempSync(join(tmpdir(), 'understudy-bench-fleet-'));
  const redis = await redisForBench().catch(async (err: unknown) => {
    await sim.close();
    throw err;
  });
  try {
    const generateS = (performance.now() - g0) / 1000;
    const fleet: Fleet = { sim, redisUrl: redis.url, dir, seeded: await seededCounts(sim) };
    const results: RunResult[] = [];
    for (const spec of RUNS) {
      process.stderr.write(`fleet-full: ${spec.workers} worker(s) on ${spec.engine}...\n`);
      const r = await runOnce(fleet, spec);
      mustBeComplete(r);
      results.push(r);
    }
    return fleetReport(
      { tenants: TENANTS, perCollection: PER_COLLECTION, concurrency: CONCURRENCY, generateS },
      fleet.seeded,
      results,
    );
  } finally {
    await redis.stop();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
