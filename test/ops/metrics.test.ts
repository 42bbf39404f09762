import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { instrumentGate } from '../../src/ops/instrument-gate.js';
import { createOpsMetrics } from '../../src/ops/metrics.js';
import { readLastSuccesses } from '../../src/ops/worker-ops.js';
import { createMemoryRateGate } from '../../src/partners/memory-rate-gate.js';
import { openStore } from '../../src/store/open-mirror.js';
import { tempDir } from '../helpers/sync-harness.js';
import { parsePrometheus, sampleValue } from './parse-prometheus.js';

const scrape = async (m: ReturnType<typeof createOpsMetrics>) => parsePrometheus(await m.text());

describe('ops metrics', () => {
  it('computes lag from the mirror (every worker, before this process) and from syncs seen here, newest first', async () => {
    const path = join(tempDir(), 'mirror.db');
    const store = await openStore(path);
    await store.close();
    const raw = new Database(path);
    const insert = raw.prepare(
      'INSERT INTO sync_state (tenant, collection, variant, last_success_at) VALUES (?, ?, ?, ?)',
    );
    insert.run('acme', 'series', 'published', '2026-01-01T00:00:00.000Z');
    insert.run('acme', 'series', 'draft', '2026-01-01T00:10:00.000Z');
    insert.run('acme', 'pages', 'published', '2026-01-01T00:00:00.000Z');
    insert.run('acme', 'venues', 'published', null);
    raw.close();

    const now = Date.parse('2026-01-01T01:00:00.000Z');
    const metrics = createOpsMetrics({ now: () => now, processMetrics: false });
    metrics.readLastSuccesses(() => readLastSuccesses(path));
    metrics.syncFinished({
      tenant: 'acme',
      mode: 'incremental',
      report: { name: 'pages', inserted: 0, updated: 0, deleted: 0, ms: 5 },
    });
    const e = await scrape(metrics);
    // Freshness is time() - this in PromQL: one series, not a second "lag" gauge saying the same.
    expect(sampleValue(e, 'understudy_sync_last_success_timestamp_seconds', { collection: 'series' })).toBe(
      Date.parse('2026-01-01T00:10:00.000Z') / 1000,
    );
    expect(sampleValue(e, 'understudy_sync_last_success_timestamp_seconds', { collection: 'pages' })).toBe(now / 1000);
    expect(sampleValue(e, 'understudy_sync_last_success_timestamp_seconds', { collection: 'venues' })).toBeUndefined();
    expect(e.types.has('understudy_sync_lag_seconds')).toBe(false);
  });

  it('leaves a failed or skipped sync out of lag and counts it by status', async () => {
    const metrics = createOpsMetrics({ processMetrics: false });
    const report = { name: 'series', inserted: 1, updated: 0, deleted: 0, ms: 5 };
    metrics.syncFinished({ tenant: 'acme', mode: 'full', report: { ...report, error: 'GET … -> 500' } });
    metrics.syncFinished({ tenant: 'acme', mode: 'full', report: { ...report, skipped: 'no route' } });
    const e = await scrape(metrics);
    expect(sampleValue(e, 'understudy_sync_lag_seconds')).toBeUndefined();
    expect(sampleValue(e, 'understudy_sync_duration_seconds_count', { status: 'failed' })).toBe(1);
    expect(sampleValue(e, 'understudy_sync_duration_seconds_count', { status: 'skipped' })).toBe(1);
  });

  it('leaves out the depth of a queue whose Redis does not answer instead of hanging the scrape', async () => {
    const metrics = createOpsMetrics({ processMetrics: false, queueTimeoutMs: 20 });
    metrics.watchQueues([
      { name: 'sync', getJobCounts: () => new Promise<Record<string, number>>(() => {}) },
      { name: 'writes', getJobCounts: async () => ({ waiting: 3, failed: 1 }) },
    ]);
    const e = await scrape(metrics);
    expect(sampleValue(e, 'understudy_queue_jobs', { queue: 'sync' })).toBeUndefined();
    expect(sampleValue(e, 'understudy_queue_jobs', { queue: 'writes', state: 'waiting' })).toBe(3);
    expect(sampleValue(e, 'understudy_queue_jobs', { queue: 'writes', state: 'active' })).toBe(0);
  });

  it('reports the time a request waited at the rate gate', async () => {
    const metrics = createOpsMetrics({ processMetrics: false });
    const gate = instrumentGate(createMemoryRateGate({ reads: 10, writes: 10, windowMs: 60_000 }), metrics);
    const signal = new AbortController().signal;
    await gate.acquire('read', { signal });
    await gate.acquire('write', { signal });
    await gate.close();
    const e = await scrape(metrics);
    expect(sampleValue(e, 'understudy_rate_gate_wait_seconds_count', { kind: 'read' })).toBe(1);
    expect(sampleValue(e, 'understudy_rate_gate_wait_seconds_count', { kind: 'write' })).toBe(1);
  });
});
