import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { onTestFinished } from 'vitest';
import { createLogger } from '../../src/log.js';
import { createMemoryRateGate } from '../../src/partners/memory-rate-gate.js';
import type { PartnersClient } from '../../src/partners/partners-client.js';
import { type SimulatorOptions, startSimulator } from '../../src/sim/start-simulator.js';
import { openMirror } from '../../src/store/open-mirror.js';
import type { Store } from '../../src/sync/store-port.js';
import type { SyncDeps, TenantTarget } from '../../src/sync/sync-collection.js';
import { tenantSlug } from '../../src/vocabulary/ids.js';
import { testPool } from './http-pool.js';
import { manualClock } from './manual-clock.js';
import { createHttpPartnersClient, type HttpClientOptions } from './partners-client.js';

export const silentLog = createLogger({ level: 'silent' });

export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'understudy-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A client of a simulator tenant with a budget too large to matter and short retries. */
export const unlimitedClient = (
  baseUrl: string,
  t: { readonly slug: string; readonly key: string },
  opts: Partial<HttpClientOptions> = {},
): PartnersClient =>
  createHttpPartnersClient({
    dispatcher: testPool(),
    baseUrl,
    tenant: tenantSlug(t.slug),
    apiKey: t.key,
    gate: createMemoryRateGate({ reads: 1_000_000, writes: 1_000_000, windowMs: 1000 }),
    retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 50 },
    log: silentLog,
    ...opts,
  });

/**
 * A simulator with limits off, a fresh SQLite mirror and a client for its first tenant. The mirror reckons leases
 * by `clock`, which stands still until the test moves it: a lease expires when the test says, not while it sleeps.
 */
export async function syncHarness(simOpts: SimulatorOptions = {}, clientOpts: Partial<HttpClientOptions> = {}) {
  const sim = await startSimulator({ port: 0, readLimit: 0, writeLimit: 0, records: 12, ...simOpts });
  onTestFinished(() => sim.close());
  const dbPath = join(tempDir(), 'mirror.db');
  const clock = manualClock();
  const { store, watch } = await openMirror(dbPath, clock);
  onTestFinished(() => store.close());
  const t = sim.tenants[0];
  if (!t) throw new Error('simulator has no tenant');
  const slug = tenantSlug(t.slug);
  const client = unlimitedClient(sim.url, t, clientOpts);
  const deps = (overrides: Partial<SyncDeps> = {}): SyncDeps => ({ client, store, log: silentLog, ...overrides });
  const target: TenantTarget = { slug };
  /** Reads the mirror directly, as a person with sqlite3 would. */
  const query = <T = Record<string, unknown>>(sql: string, ...params: unknown[]): T[] => {
    const db = new Database(dbPath, { readonly: true });
    try {
      return db.prepare(sql).all(...params) as T[];
    } finally {
      db.close();
    }
  };
  const upstream = (collection: Parameters<typeof sim.controls.docs>[1]) => sim.controls.docs(t.slug, collection);
  return { sim, store, watch, clock, client, deps, target, query, dbPath, tenant: t, upstream };
}

export type Harness = Awaited<ReturnType<typeof syncHarness>>;
export type { PartnersClient, Store };
