import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { createLogger } from '../../src/log.js';
import { startOpsServer } from '../../src/ops/http-server.js';
import { createOpsMetrics } from '../../src/ops/metrics.js';
import { databaseCheck, redisCheck, runChecks } from '../../src/ops/readiness.js';
import { appliedMigrations } from '../../src/ops/worker-ops.js';
import { MIGRATION_NAMES } from '../../src/store/migrate.js';
import { fileMirrorHealth } from '../../src/store/mirror-health.js';
import { openStore } from '../../src/store/open-mirror.js';
import { VERSION } from '../../src/version.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { tempDir } from '../helpers/sync-harness.js';
import { parsePrometheus, sampleValue } from './parse-prometheus.js';

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

const connect = (url = server.url): Redis => {
  const r = new Redis(url, { maxRetriesPerRequest: null, retryStrategy: () => 200 });
  r.on('error', () => {});
  onTestFinished(() => {
    r.disconnect();
  });
  return r;
};

const migratedDb = async (): Promise<string> => {
  const path = join(tempDir(), 'mirror.db');
  const store = await openStore(path);
  await store.close();
  return path;
};

const queueOn = (redis: Redis): Queue => {
  const q = new Queue('sync', { connection: redis, prefix: `t-${randomUUID()}` });
  onTestFinished(() => q.close());
  return q;
};

describe('ops HTTP server', () => {
  it('serves /healthz, and /metrics as Prometheus text with every understudy metric typed', async () => {
    const metrics = createOpsMetrics({ now: () => 1_000_000 });
    const redis = connect();
    const queue = queueOn(redis);
    await queue.add('sync-tenant', { tenant: 'acme', mode: 'full' });
    metrics.watchQueues([queue]);
    metrics.upstreamRequest({
      tenant: 'acme',
      method: 'GET',
      route: '/partners/{version}/{tenant}/series',
      status: 200,
      ms: 12,
    });
    metrics.upstreamRequest({
      tenant: 'acme',
      method: 'GET',
      route: '/partners/{version}/{tenant}/series',
      status: 429,
      ms: 3,
    });
    metrics.gateWaited({ kind: 'read', ms: 1500 });
    metrics.lastSuccess('acme', 'pages', 940_000);
    metrics.syncFinished({
      tenant: 'acme',
      mode: 'full',
      report: { name: 'series', inserted: 5, updated: 2, deleted: 1, ms: 800 },
    });
    metrics.writeFinished({ tenant: 'acme', collection: 'series', op: 'update', status: 'ok', ms: 40 });
    const ops = await startOpsServer({
      port: 0,
      host: '127.0.0.1',
      metrics,
      ready: async () => ({ ok: true, checks: {} }),
    });
    onTestFinished(() => ops.close());

    const health = await fetch(`${ops.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ ok: true });

    const res = await fetch(`${ops.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const e = parsePrometheus(await res.text());
    expect(Object.fromEntries([...e.types].filter(([n]) => n.startsWith('understudy_')))).toEqual({
      understudy_upstream_requests_total: 'counter',
      understudy_upstream_request_duration_seconds: 'histogram',
      understudy_freshness_seconds: 'histogram',
      understudy_watch_probes_total: 'counter',
      understudy_watch_budget_share: 'gauge',
      understudy_rate_gate_wait_seconds: 'histogram',
      understudy_records_upserted_total: 'counter',
      understudy_records_deleted_total: 'counter',
      understudy_records_future_dated_total: 'counter',
      understudy_records_undated_total: 'counter',
      understudy_sync_duration_seconds: 'histogram',
      understudy_sync_last_success_timestamp_seconds: 'gauge',
      understudy_sync_parked_total: 'counter',
      understudy_redis_data_lost_total: 'counter',
      understudy_writes_total: 'counter',
      understudy_write_duration_seconds: 'histogram',
      understudy_queue_jobs: 'gauge',
      understudy_build_info: 'gauge',
    });
    // Node's standard names, unprefixed: what stock dashboards and alerts query.
    expect(e.types.get('process_cpu_seconds_total')).toBe('counter');
    expect(e.types.get('nodejs_heap_size_used_bytes')).toBe('gauge');
    expect(sampleValue(e, 'understudy_build_info', { version: VERSION })).toBe(1);
    const route = '/partners/{version}/{tenant}/series';
    expect(sampleValue(e, 'understudy_upstream_requests_total', { tenant: 'acme', route, status: '200' })).toBe(1);
    expect(sampleValue(e, 'understudy_upstream_requests_total', { tenant: 'acme', route, status: '429' })).toBe(1);
    expect(sampleValue(e, 'understudy_rate_gate_wait_seconds_sum', { kind: 'read' })).toBe(1.5);
    expect(sampleValue(e, 'understudy_records_upserted_total', { collection: 'series', change: 'inserted' })).toBe(5);
    expect(sampleValue(e, 'understudy_records_upserted_total', { collection: 'series', change: 'updated' })).toBe(2);
    expect(sampleValue(e, 'understudy_records_deleted_total', { collection: 'series' })).toBe(1);
    expect(sampleValue(e, 'understudy_sync_duration_seconds_count', { collection: 'series', status: 'ok' })).toBe(1);
    expect(sampleValue(e, 'understudy_sync_last_success_timestamp_seconds', { collection: 'series' })).toBeDefined();
    expect(sampleValue(e, 'understudy_writes_total', { op: 'update', status: 'ok' })).toBe(1);
    expect(sampleValue(e, 'understudy_queue_jobs', { queue: 'sync', state: 'waiting' })).toBe(1);
    expect(sampleValue(e, 'understudy_queue_jobs', { queue: 'sync', state: 'active' })).toBe(0);
  });

  it('answers a person: / lists the endpoints, /queues without a token is a page saying how to pass one', async () => {
    const ops = await startOpsServer({
      port: 0,
      host: '127.0.0.1',
      metrics: createOpsMetrics({ processMetrics: false }),
      ready: async () => ({ ok: true, checks: {} }),
      dashboardToken: 'page-token-page-token',
    });
    onTestFinished(() => ops.close());
    const root = await fetch(`${ops.url}/`);
    expect(root.status).toBe(200);
    const listed = (await root.json()) as { version: string; endpoints: Record<string, string> };
    expect(Object.keys(listed.endpoints)).toEqual(['/healthz', '/readyz', '/metrics', '/queues']);
    expect(listed.version).toBe(VERSION);
    const html = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };
    expect(await (await fetch(`${ops.url}/`, { headers: html })).text()).toMatch(/<a href="\/metrics">/);

    const refused = await fetch(`${ops.url}/queues`, { headers: html });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('content-type')).toMatch(/^text\/html/);
    const text = await refused.text();
    expect(text).toContain('/queues?token=');
    expect(text).toContain('Authorization: Bearer');
    expect(text).not.toContain('page-token-page-token');
    // A script still gets JSON, saying the same.
    const api = await fetch(`${ops.url}/queues`);
    expect(api.status).toBe(401);
    expect(((await api.json()) as { error: string }).error).toMatch(/Bearer/);
  });

  it('guards the dashboard with the token: 401 without or with a wrong one, 200 by header, query or cookie', async () => {
    const redis = connect();
    const ops = await startOpsServer({
      port: 0,
      host: '127.0.0.1',
      metrics: createOpsMetrics({ processMetrics: false }),
      ready: async () => ({ ok: true, checks: {} }),
      queues: [queueOn(redis)],
      dashboardToken: 's3cret-dashboard-token',
    });
    onTestFinished(() => ops.close());
    expect((await fetch(`${ops.url}/queues`)).status).toBe(401);
    expect((await fetch(`${ops.url}/queues/api/queues`)).status).toBe(401);
    expect((await fetch(`${ops.url}/queues`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await fetch(`${ops.url}/queues?token=wrong`)).status).toBe(401);

    const byHeader = await fetch(`${ops.url}/queues`, { headers: { authorization: 'Bearer s3cret-dashboard-token' } });
    expect(byHeader.status).toBe(200);
    expect(await byHeader.text()).toContain('<html');

    const byQuery = await fetch(`${ops.url}/queues?token=s3cret-dashboard-token`, { redirect: 'manual' });
    // The token leaves the address bar: 303 to the same page without it, the cookie set on the way.
    expect(byQuery.status).toBe(303);
    expect(byQuery.headers.get('location')).toBe('/queues');
    const cookie = byQuery.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).not.toContain('s3cret-dashboard-token');

    const api = await fetch(`${ops.url}/queues/api/queues`, { headers: { cookie: cookie.split(';')[0]! } });
    expect(api.status).toBe(200);
    const body = (await api.json()) as { queues: { name: string }[] };
    expect(body.queues.map((q) => q.name)).toEqual(['sync']);
    // The page's own assets load with the cookie alone, under /queues/ (trailing slash too).
    const page = await fetch(`${ops.url}/queues/`, { headers: { cookie: cookie.split(';')[0]! } });
    expect(page.status).toBe(200);
    const script = /src="(static\/js\/[^"]+)"/.exec(await page.text())?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${ops.url}/queues/${script}`, { headers: { cookie: cookie.split(';')[0]! } });
    expect(asset.status).toBe(200);
    expect((await fetch(`${ops.url}/queues/${script}`)).status).toBe(401);
  });

  it('listens on 127.0.0.1 unless a host is given', async () => {
    const ready = async () => ({ ok: true, checks: {} });
    const metrics = createOpsMetrics({ processMetrics: false });
    const closed = await startOpsServer({ port: 0, metrics, ready });
    onTestFinished(() => closed.close());
    expect(closed.host).toBe('127.0.0.1');
    const open = await startOpsServer({ port: 0, host: '0.0.0.0', metrics, ready });
    onTestFinished(() => open.close());
    expect(open.host).toBe('0.0.0.0');
  });

  it('expires the dashboard session cookie after 12 hours, whatever the browser keeps', async () => {
    let now = Date.parse('2026-03-01T00:00:00Z');
    const ops = await startOpsServer({
      port: 0,
      metrics: createOpsMetrics({ processMetrics: false }),
      ready: async () => ({ ok: true, checks: {} }),
      queues: [queueOn(connect())],
      dashboardToken: 's3cret-dashboard-token',
      now: () => now,
    });
    onTestFinished(() => ops.close());
    const login = await fetch(`${ops.url}/queues/api/queues`, {
      headers: { authorization: 'Bearer s3cret-dashboard-token' },
    });
    const setCookie = login.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/Max-Age=43200/);
    const cookie = { cookie: setCookie.split(';')[0]! };
    now += 12 * 3600 * 1000 - 1000;
    expect((await fetch(`${ops.url}/queues/api/queues`, { headers: cookie })).status).toBe(200);
    now += 2000;
    expect((await fetch(`${ops.url}/queues/api/queues`, { headers: cookie })).status).toBe(401);
    // A forged expiry does not pass: the expiry is signed with the token.
    const forged = cookie.cookie.replace(/=\d+\./, `=${now + 3600_000}.`);
    expect((await fetch(`${ops.url}/queues/api/queues`, { headers: { cookie: forged } })).status).toBe(401);
  });

  it('logs each request by its path, never with the ?token= query', async () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        cb();
      },
    });
    const ops = await startOpsServer({
      port: 0,
      metrics: createOpsMetrics({ processMetrics: false }),
      ready: async () => ({ ok: true, checks: {} }),
      queues: [queueOn(connect())],
      dashboardToken: 's3cret-dashboard-token',
      log: createLogger({ level: 'debug', destination }),
    });
    onTestFinished(() => ops.close());
    await fetch(`${ops.url}/queues?token=s3cret-dashboard-token&tab=jobs`, { redirect: 'manual' });
    await fetch(`${ops.url}/queues?token=wrong-guess-token`);
    await vi.waitFor(() => expect(lines).toHaveLength(2));
    expect(lines.map((l) => JSON.parse(l))).toMatchObject([
      { msg: 'ops request', method: 'GET', path: '/queues', status: 303 },
      { msg: 'ops request', method: 'GET', path: '/queues', status: 401 },
    ]);
    expect(lines.join('\n')).not.toMatch(/s3cret|wrong-guess|token=/);
  });

  it('turns the dashboard off when no token is configured', async () => {
    const ops = await startOpsServer({
      port: 0,
      host: '127.0.0.1',
      metrics: createOpsMetrics({ processMetrics: false }),
      ready: async () => ({ ok: true, checks: {} }),
    });
    onTestFinished(() => ops.close());
    expect((await fetch(`${ops.url}/queues`)).status).toBe(403);
    expect((await fetch(`${ops.url}/queues?token=`)).status).toBe(403);
    expect((await fetch(`${ops.url}/nope`)).status).toBe(404);
  });

  it('answers /readyz 200 with Redis and a migrated database, 503 once Redis is gone while /healthz stays 200', async () => {
    // Redis is killed here, so on a server of our own whatever REDIS_URL says.
    const own = await startRedis({ own: true });
    onTestFinished(() => own.stop());
    const path = await migratedDb();
    const redis = connect(own.url);
    await redis.ping();
    const checks = { redis: redisCheck(redis), database: databaseCheck(fileMirrorHealth(path), MIGRATION_NAMES) };
    const ops = await startOpsServer({
      port: 0,
      host: '127.0.0.1',
      metrics: createOpsMetrics({ processMetrics: false }),
      ready: () => runChecks(checks, 1500),
    });
    onTestFinished(() => ops.close());
    const ready = await fetch(`${ops.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ok: true, checks: { redis: { ok: true }, database: { ok: true } } });

    await own.kill();
    await vi.waitFor(async () => expect((await fetch(`${ops.url}/readyz`)).status).toBe(503), { timeout: 30_000 });
    const notReady = await fetch(`${ops.url}/readyz`);
    expect(await notReady.json()).toMatchObject({
      ok: false,
      checks: { redis: { ok: false }, database: { ok: true } },
    });
    expect((await fetch(`${ops.url}/healthz`)).status).toBe(200);
  });
});

describe('readiness checks', () => {
  it('fails the database check for a missing file and for migrations not applied', async () => {
    const dir = tempDir();
    const missing = await runChecks({ database: databaseCheck(fileMirrorHealth(join(dir, 'none.db')), ['m1']) });
    expect(missing).toMatchObject({ ok: false, checks: { database: { ok: false } } });

    const path = await migratedDb();
    const behind = await runChecks({
      database: databaseCheck(fileMirrorHealth(path), [...(await appliedMigrations(path)), '2099-01-01-001-future']),
    });
    expect(behind.checks.database?.detail).toContain('2099-01-01-001-future');
  });

  it('bounds a check that never answers by the timeout', async () => {
    const r = await runChecks({ stuck: () => new Promise<void>(() => {}) }, 50);
    expect(r).toMatchObject({ ok: false, checks: { stuck: { ok: false, detail: 'no answer within 50 ms' } } });
  });

  it('fails the Redis check at once while the connection is not ready', async () => {
    const r = await runChecks({ redis: redisCheck({ status: 'reconnecting', ping: () => new Promise(() => {}) }) });
    expect(r.checks.redis).toMatchObject({ ok: false, detail: 'connection reconnecting' });
  });
});
