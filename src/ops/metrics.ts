import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { VERSION } from '../version.js';
import { type WatchMetrics, watchMetrics } from './watch-metrics.js';

/** What the metrics need from a BullMQ queue: its name and its job counts (read on each scrape). */
export interface QueueLike {
  readonly name: string;
  getJobCounts(...types: string[]): Promise<Record<string, number>>;
}

/** One upstream request as the HTTP client reports it; `route` is the route template, never a URL. */
export interface UpstreamRequestEvent {
  readonly tenant: string;
  readonly method: string;
  readonly route: string;
  readonly status: number;
  readonly ms: number;
}

/** The part of a sync report (one collection of one tenant) the metrics read. */
export interface SyncReportLike {
  readonly name: string;
  readonly inserted: number;
  readonly updated: number;
  readonly deleted: number;
  /** Records dated in the future (past the run's start plus the skew allowance), seen by this run. */
  readonly future?: number;
  /** Records whose `updatedAt` is null or not a date, seen by this run. */
  readonly undated?: number;
  readonly ms: number;
  readonly error?: string;
  readonly skipped?: string;
}

export interface SyncFinishedEvent {
  readonly tenant: string;
  readonly mode: string;
  readonly report: SyncReportLike;
}

/** One write pushed upstream (or given up on): `status` is its outcome, e.g. `ok`, `failed`, `conflict`. */
export interface WriteFinishedEvent {
  readonly tenant: string;
  readonly collection: string;
  readonly op: string;
  readonly status: string;
  readonly ms?: number;
}

export interface LastSuccess {
  readonly tenant: string;
  readonly collection: string;
  /** Unix milliseconds. */
  readonly at: number;
}

export interface OpsMetricsOptions {
  /** Clock for the time of a success this process saw; default `Date.now`. */
  readonly now?: () => number;
  /**
   * Add prom-client's standard process and Node.js metrics (CPU, memory, event loop, GC) under their usual names
   * (`process_cpu_user_seconds_total`, `nodejs_heap_size_used_bytes`, …), the names dashboards expect. Default true.
   */
  readonly processMetrics?: boolean;
  /** How long a scrape waits for queue counts before leaving them out (default 1000 ms). */
  readonly queueTimeoutMs?: number;
}

/**
 * The process's Prometheus metrics, on a registry of their own (not prom-client's global one), with one hook
 * per event the rest of the code reports. Hooks never throw and never block.
 */
export interface OpsMetrics extends WatchMetrics {
  readonly registry: Registry;
  /** The `Content-Type` of `text()`. */
  readonly contentType: string;
  /** Counts an upstream request by tenant, method, route template and status (429: rate limited). */
  upstreamRequest(e: UpstreamRequestEvent): void;
  /** Records time a request waited at the rate gate before it could be sent. */
  gateWaited(e: { readonly kind: string; readonly ms: number }): void;
  /** Records one finished collection sync: duration, records upserted and deleted, and (on success) its time. */
  syncFinished(e: SyncFinishedEvent): void;
  /** Seeds the time of a collection's last successful sync (e.g. from the store at start). */
  lastSuccess(tenant: string, collection: string, at: number): void;
  /** Counts one write's outcome. */
  writeFinished(e: WriteFinishedEvent): void;
  /** Counts a sync job that gave its worker slot back while waiting for its key's budget (parked). */
  syncParked(e: { readonly tenant: string }): void;
  /** Counts a loss of Redis' data noticed by this worker (FLUSHALL, a restart without persistence). */
  redisDataLost(): void;
  /**
   * A source of last successful sync times read at each scrape (e.g. the mirror's `sync_state`), so the last success covers
   * syncs done by every worker and before this process started.
   */
  readLastSuccesses(source: () => Promise<readonly LastSuccess[]>): void;
  /** Queues whose depth is read at each scrape. */
  watchQueues(queues: readonly QueueLike[]): void;
  /** The Prometheus text exposition of every metric. */
  text(): Promise<string>;
}

const QUEUE_STATES = [
  'waiting',
  'active',
  'delayed',
  'prioritized',
  'waiting-children',
  'paused',
  'failed',
  'completed',
];

const withTimeout = <T>(p: Promise<T>, ms: number): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
};

type Registers = Registry[];

/** A hook that never throws: a metric must never break the work it measures. */
const safe =
  <A extends unknown[]>(fn: (...args: A) => void) =>
  (...args: A): void => {
    try {
      fn(...args);
    } catch {
      // A metric must never break the work it measures.
    }
  };

function buildInfo(registers: Registers): void {
  new Gauge({
    name: 'understudy_build_info',
    help: 'Always 1; the label says which understudy version runs (nodejs_version_info says which Node.js).',
    labelNames: ['version'] as const,
    registers,
  }).set({ version: VERSION }, 1);
}

function upstreamMetrics(registers: Registers): Pick<OpsMetrics, 'upstreamRequest'> {
  const requests = new Counter({
    name: 'understudy_upstream_requests_total',
    help: 'Requests sent to the Partners API, by tenant, method, route template and HTTP status (0: no answer).',
    labelNames: ['tenant', 'method', 'route', 'status'] as const,
    registers,
  });
  const requestSeconds = new Histogram({
    name: 'understudy_upstream_request_duration_seconds',
    help: 'Time from sending a Partners API request to its answer, by tenant and method.',
    labelNames: ['tenant', 'method'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  return {
    upstreamRequest: safe((e: UpstreamRequestEvent) => {
      const status = String(e.status);
      requests.inc({ tenant: e.tenant, method: e.method, route: e.route, status });
      requestSeconds.observe({ tenant: e.tenant, method: e.method }, e.ms / 1000);
    }),
  };
}

function workerMetrics(registers: Registers): Pick<OpsMetrics, 'syncParked' | 'redisDataLost' | 'gateWaited'> {
  const parked = new Counter({
    name: 'understudy_sync_parked_total',
    help: "Sync jobs that gave their worker slot back while waiting for their key's budget, by tenant.",
    labelNames: ['tenant'] as const,
    registers,
  });
  const redisLost = new Counter({
    name: 'understudy_redis_data_lost_total',
    help: 'Times this worker found Redis emptied under it (schedules recreated, rate gates held for a window).',
    registers,
  });
  const gateWait = new Histogram({
    name: 'understudy_rate_gate_wait_seconds',
    help: 'Time a request waited at the per-key rate gate before it could be sent, by kind (read, write).',
    labelNames: ['kind'] as const,
    buckets: [0.01, 0.1, 0.5, 1, 5, 15, 30, 60, 120],
    registers,
  });
  return {
    syncParked: safe((e: { tenant: string }) => {
      parked.inc({ tenant: e.tenant });
    }),
    redisDataLost: safe(() => {
      redisLost.inc();
    }),
    gateWaited: safe((e: { kind: string; ms: number }) => {
      gateWait.observe({ kind: e.kind }, Math.max(0, e.ms) / 1000);
    }),
  };
}

/** The records a sync wrote, by tenant and collection: upserted, deleted, future-dated and undated. */
function recordMetrics(registers: Registers) {
  const tc = ['tenant', 'collection'] as const;
  return {
    upserted: new Counter({
      name: 'understudy_records_upserted_total',
      help: 'Records written into the mirror by sync, by tenant, collection and change (inserted, updated).',
      labelNames: ['tenant', 'collection', 'change'] as const,
      registers,
    }),
    deleted: new Counter({
      name: 'understudy_records_deleted_total',
      help: 'Records marked deleted in the mirror by sync, by tenant and collection.',
      labelNames: tc,
      registers,
    }),
    futureDated: new Counter({
      name: 'understudy_records_future_dated_total',
      help: 'Records read by sync dated in the future (past the run start plus sync.clockSkewMs), by tenant and collection.',
      labelNames: tc,
      registers,
    }),
    undated: new Counter({
      name: 'understudy_records_undated_total',
      help: 'Records read by sync whose updatedAt is null or not a date, by tenant and collection.',
      labelNames: tc,
      registers,
    }),
  };
}

function syncMetrics(
  registers: Registers,
  now: () => number,
  noteSuccess: (tenant: string, collection: string, at: number) => void,
): Pick<OpsMetrics, 'syncFinished'> {
  const records = recordMetrics(registers);
  const syncSeconds = new Histogram({
    name: 'understudy_sync_duration_seconds',
    help: 'Duration of one collection sync, by tenant, collection, mode and status (ok, failed, skipped).',
    labelNames: ['tenant', 'collection', 'mode', 'status'] as const,
    buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600],
    registers,
  });
  return {
    syncFinished: safe((e: SyncFinishedEvent) => {
      const { tenant, mode, report: r } = e;
      const collection = r.name;
      const status = r.error ? 'failed' : r.skipped ? 'skipped' : 'ok';
      syncSeconds.observe({ tenant, collection, mode, status }, r.ms / 1000);
      if (r.inserted > 0) records.upserted.inc({ tenant, collection, change: 'inserted' }, r.inserted);
      if (r.updated > 0) records.upserted.inc({ tenant, collection, change: 'updated' }, r.updated);
      if (r.deleted > 0) records.deleted.inc({ tenant, collection }, r.deleted);
      if ((r.future ?? 0) > 0) records.futureDated.inc({ tenant, collection }, r.future);
      if ((r.undated ?? 0) > 0) records.undated.inc({ tenant, collection }, r.undated);
      if (status === 'ok') noteSuccess(tenant, collection, now());
    }),
  };
}

/**
 * The last successful sync per tenant and collection: what this process saw, merged at each scrape with what
 * the sources say (read at most once a second, each within `timeoutMs`). Its gauge is registered by `register`,
 * after the sync metrics that note successes.
 */
function lastSuccesses(timeoutMs: number) {
  const successes = new Map<string, LastSuccess>();
  const note = (tenant: string, collection: string, at: number) => {
    const k = `${tenant}\u0000${collection}`;
    const prev = successes.get(k);
    if (!prev || prev.at < at) successes.set(k, { tenant, collection, at });
  };
  const sources: (() => Promise<readonly LastSuccess[]>)[] = [];
  const readSource = async (src: () => Promise<readonly LastSuccess[]>) => {
    try {
      for (const s of await withTimeout(src(), timeoutMs)) note(s.tenant, s.collection, s.at);
    } catch {
      // The source is unreadable right now: the last success stays what is known.
    }
  };
  // One read of the sources serves a whole scrape.
  let reading: { at: number; done: Promise<void> } | null = null;
  const refresh = (): Promise<void> => {
    const t = Date.now();
    if (reading && t - reading.at < 1000) return reading.done;
    const done = Promise.all(sources.map(readSource)).then(() => undefined);
    reading = { at: t, done };
    return done;
  };
  const register = (registers: Registers) =>
    new Gauge({
      name: 'understudy_sync_last_success_timestamp_seconds',
      help: 'Unix time of the last successful sync, by tenant and collection.',
      labelNames: ['tenant', 'collection'] as const,
      registers,
      async collect() {
        await refresh();
        for (const s of successes.values()) this.set({ tenant: s.tenant, collection: s.collection }, s.at / 1000);
      },
    });
  return { note, sources, register };
}

function writeMetrics(registers: Registers): Pick<OpsMetrics, 'writeFinished'> {
  const writes = new Counter({
    name: 'understudy_writes_total',
    help: 'Writes pushed to the Partners API, by tenant, collection, operation and outcome.',
    labelNames: ['tenant', 'collection', 'op', 'status'] as const,
    registers,
  });
  const writeSeconds = new Histogram({
    name: 'understudy_write_duration_seconds',
    help: 'Time one write job took, by operation and outcome.',
    labelNames: ['op', 'status'] as const,
    buckets: [0.05, 0.1, 0.5, 1, 5, 15, 60],
    registers,
  });
  return {
    writeFinished: safe((e: WriteFinishedEvent) => {
      writes.inc({ tenant: e.tenant, collection: e.collection, op: e.op, status: e.status });
      if (e.ms !== undefined) writeSeconds.observe({ op: e.op, status: e.status }, e.ms / 1000);
    }),
  };
}

/** The depth of each watched queue by state, read from Redis at scrape time. */
function queueMetrics(registers: Registers, timeoutMs: number): Pick<OpsMetrics, 'watchQueues'> {
  const queues: QueueLike[] = [];
  new Gauge({
    name: 'understudy_queue_jobs',
    help: 'Jobs in each BullMQ queue by state, read from Redis at scrape time (absent when Redis does not answer).',
    labelNames: ['queue', 'state'] as const,
    registers,
    async collect() {
      this.reset();
      await Promise.all(
        queues.map(async (q) => {
          try {
            const counts = await withTimeout(q.getJobCounts(...QUEUE_STATES), timeoutMs);
            for (const state of QUEUE_STATES) this.set({ queue: q.name, state }, counts[state] ?? 0);
          } catch {
            // Redis unreachable: leave this queue out of the scrape rather than report stale depths.
          }
        }),
      );
    },
  });
  return {
    watchQueues(list) {
      for (const q of list) if (!queues.includes(q)) queues.push(q);
    },
  };
}

/** Builds the metrics registry and its hooks (registered in the order the exposition lists them). */
export function createOpsMetrics(opts: OpsMetricsOptions = {}): OpsMetrics {
  const queueTimeoutMs = opts.queueTimeoutMs ?? 1000;
  const registry = new Registry();
  const registers = [registry];
  if (opts.processMetrics ?? true) collectDefaultMetrics({ register: registry });
  buildInfo(registers);
  const upstream = upstreamMetrics(registers);
  const worker = workerMetrics(registers);
  const successes = lastSuccesses(queueTimeoutMs);
  const sync = syncMetrics(registers, opts.now ?? Date.now, successes.note);
  successes.register(registers);
  const writes = writeMetrics(registers);
  const queues = queueMetrics(registers, queueTimeoutMs);
  const watch = watchMetrics(registry);
  return {
    registry,
    contentType: registry.contentType,
    ...upstream,
    ...worker,
    ...sync,
    lastSuccess: safe(successes.note),
    readLastSuccesses(source) {
      successes.sources.push(source);
    },
    ...writes,
    ...queues,
    freshness: safe(watch.freshness),
    watchProbe: safe(watch.watchProbe),
    watchShare: safe(watch.watchShare),
    text: () => registry.metrics(),
  };
}
