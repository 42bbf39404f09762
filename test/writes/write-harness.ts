import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect, onTestFinished, vi } from 'vitest';
import { createApp } from '../../src/app/create-app.js';
import { startWriteWorker, type WriteWorker, type WriteWorkerTuning } from '../../src/app/start-write-worker.js';
import { parseConfig } from '../../src/config/load-config.js';
import type { ResolvedTenant } from '../../src/config/resolve-tenants.js';
import { createMemoryRateGate } from '../../src/partners/memory-rate-gate.js';
import type { PartnersClient } from '../../src/partners/partners-client.js';
import type { RateBudget } from '../../src/partners/rate-gate.js';
import { createWriteQueue, type WriteQueue } from '../../src/queue/write-queue.js';
import { type SimulatorOptions, startSimulator } from '../../src/sim/start-simulator.js';
import { discoverRoutes } from '../../src/sync/discover-routes.js';
import { syncCollection } from '../../src/sync/sync-collection.js';
import type { CollectionSlug } from '../../src/vocabulary/collections.js';
import { type JsonObject, type TenantSlug, tenantSlug } from '../../src/vocabulary/ids.js';
import type { WriteLogEntry } from '../../src/writes/write-log.js';
import { silentLog, tempDir } from '../helpers/sync-harness.js';
import { startDroppingProxy } from './dropping-proxy.js';

/** A record's id as the queue and the mirror take it (upstreams may send numbers). */
export const idOf = (doc: JsonObject | undefined): string => String(doc?.id ?? '');

export interface WriteHarnessOptions {
  readonly redisUrl: string;
  readonly sim?: SimulatorOptions;
  readonly worker?: WriteWorkerTuning;
  /** Collections to mirror before the test (default: none). */
  readonly mirror?: readonly CollectionSlug[];
  /** Put a proxy that can drop answers between the worker's client and the simulator. */
  readonly proxy?: boolean;
  /** Per simulator tenant (in order), its key's budget; default: unlimited. */
  readonly budgets?: readonly RateBudget[];
  /** Whether the tenants mirror drafts (config `drafts`); default false. */
  readonly drafts?: boolean;
  /** The Redis key prefix; default a fresh one per test. */
  readonly prefix?: string;
}

/**
 * A simulator (limits off), a fresh mirror, a queue client and a write worker on a fresh Redis prefix, wired by the
 * real composition root (`createApp`, `startWriteWorker`) from a config, as `understudy worker` wires them; only the
 * retry and backoff timings are shortened so retries are quick. The worker starts with `startWorker()`. Rate gates
 * are in-process (each test's budget is its own), over the app's Redis connection for everything else.
 */
export async function writeHarness(opts: WriteHarnessOptions) {
  const sim = await startSimulator({ port: 0, readLimit: 0, writeLimit: 0, records: 4, tenants: 1, ...opts.sim });
  onTestFinished(() => sim.close());
  const simTenant = sim.tenants[0];
  if (!simTenant) throw new Error('simulator has no tenant');
  const slug: TenantSlug = tenantSlug(simTenant.slug);
  const dbPath = join(tempDir(), 'mirror.db');
  const prefix = opts.prefix ?? `t-${randomUUID().slice(0, 8)}`;
  const proxy = opts.proxy ? await startDroppingProxy(sim.url) : null;
  if (proxy) onTestFinished(() => proxy.close());
  const env: NodeJS.ProcessEnv = Object.fromEntries(sim.tenants.map((t, i) => [`WH_KEY_${i}`, t.key]));
  const config = parseConfig({
    baseUrl: proxy?.url ?? sim.url,
    database: dbPath,
    redis: { url: opts.redisUrl, prefix },
    tenants: sim.tenants.map((t, i) => ({
      slug: t.slug,
      apiKeyEnv: `WH_KEY_${i}`,
      rateLimit: opts.budgets?.[i] ?? { reads: 1_000_000, writes: 1_000_000, windowMs: 1000 },
      drafts: opts.drafts ?? false,
    })),
  });
  const app = await createApp(config, env, {
    profile: 'worker',
    log: silentLog,
    // Each test's budget is its own: in-process gates (the worker's Redis still holds the queues).
    gateFor: (_hash, budget) => createMemoryRateGate(budget),
    retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 20 },
  });
  onTestFinished(() => app.close());
  const { store } = app;
  const resolved = app.tenants().map((t) => t.resolved);
  const tenant = resolved[0] as ResolvedTenant;
  const client = app.tenant(slug)?.client as PartnersClient;

  if (opts.mirror?.length) {
    const routes = await discoverRoutes(client, { signal: AbortSignal.timeout(10_000) });
    for (const c of opts.mirror) {
      const report = await syncCollection(
        { client, store, log: silentLog },
        { slug },
        c,
        'full',
        routes,
        AbortSignal.timeout(10_000),
      );
      if (report.error) throw new Error(report.error);
    }
  }

  const queue: WriteQueue = await createWriteQueue({ redisUrl: opts.redisUrl, prefix, store });
  onTestFinished(() => queue.close());

  let worker: WriteWorker | null = null;
  const startWorker = async (extra: WriteWorkerTuning = {}): Promise<WriteWorker> => {
    const w = await startWriteWorker(app, {
      attempts: 3,
      backoffMs: 5,
      maxBackoffMs: 20,
      orderRecheckMs: 50,
      random: () => 0.5,
      graceMs: 200,
      ...opts.worker,
      ...extra,
    });
    worker = w;
    onTestFinished(() => w.close());
    return w;
  };
  const bull = () => {
    if (!worker) throw new Error('start the worker first');
    return worker.queue;
  };

  /** Waits until a job is completed or failed; returns which. */
  const settled = async (jobId: string, timeout = 15_000): Promise<'completed' | 'failed'> => {
    let state = '';
    await vi.waitFor(
      async () => {
        state = await bull().getJobState(jobId);
        expect(['completed', 'failed']).toContain(state);
      },
      { timeout, interval: 20 },
    );
    return state as 'completed' | 'failed';
  };

  /** Reads the mirror file directly, as a person with sqlite3 would. */
  const query = <T = Record<string, unknown>>(sql: string, ...params: unknown[]): T[] => {
    const db = new Database(dbPath, { readonly: true });
    try {
      return db.prepare(sql).all(...params) as T[];
    } finally {
      db.close();
    }
  };
  const logRow = (jobId: string) =>
    query<Record<string, unknown>>('SELECT * FROM write_log WHERE job_id = ?', jobId)[0];
  const mirrorDoc = (collection: CollectionSlug, id: string): Record<string, unknown> | null => {
    const row = query<{ doc: string; deleted_at: string | null }>(
      `SELECT doc, deleted_at FROM ${collection.replace(/-/g, '_')} WHERE tenant = ? AND id = ?`,
      slug,
      id,
    )[0];
    return row ? { ...(JSON.parse(row.doc) as Record<string, unknown>), __deletedAt: row.deleted_at } : null;
  };
  // Every record upstream, never-published ones included: a create without `_status` makes a draft (Payload).
  const upstream = (collection: CollectionSlug) => sim.controls.docs(slug, collection, { draft: true });
  /** A full sync of one collection, as `understudy sync --full` runs it; returns its report. */
  const fullSync = async (collection: CollectionSlug) => {
    const routes = await discoverRoutes(client, { signal: AbortSignal.timeout(10_000) });
    return syncCollection(
      { client, store, log: silentLog },
      { slug, drafts: opts.drafts ?? false },
      collection,
      'full',
      routes,
      AbortSignal.timeout(10_000),
    );
  };
  return {
    app,
    sim,
    proxy,
    store,
    client,
    dbPath,
    prefix,
    tenant,
    slug,
    tenants: resolved,
    queue,
    startWorker,
    bull,
    settled,
    query,
    logRow,
    mirrorDoc,
    upstream,
    fullSync,
  };
}

export type WriteHarness = Awaited<ReturnType<typeof writeHarness>>;
export type { WriteLogEntry };
