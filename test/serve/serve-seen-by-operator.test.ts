import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type RunningServe, startServe } from '../../src/app/start-serve.js';
import { parseConfig } from '../../src/config/load-config.js';
import { createLogger } from '../../src/log.js';
import { serveProcessesKey } from '../../src/queue/serve-processes.js';
import { type Simulator, startSimulator } from '../../src/sim/start-simulator.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { runCli } from '../helpers/run-cli.js';
import { parsePrometheus } from '../ops/parse-prometheus.js';

// Redis is killed at the end (status without it), so this file runs on a server of its own.
let server: TestRedis;
let sim: Simulator;
let dir = '';
/** The config file, its tenant, its Redis prefix and the environment the CLI runs with. */
const h = { configPath: '', tenant: '', prefix: `t-${randomUUID()}`, env: {} as Record<string, string> };
let serve: RunningServe;
const token = (name: string) => `tok_${name}_${randomBytes(12).toString('hex')}`;
const TOKENS = { writer: token('writer'), reader: token('reader'), burst: token('burst') };
const RATE = 3;

beforeAll(async () => {
  server = await startRedis({ own: true });
  sim = await startSimulator({ port: 0, readLimit: 0, writeLimit: 0, records: 6 });
  const t = sim.tenants[0]!;
  dir = mkdtempSync(join(tmpdir(), 'understudy-'));
  h.configPath = join(dir, 'config.json');
  h.tenant = t.slug;
  h.env = { W_KEY: t.key, REDIS_URL: server.url, LOG_LEVEL: 'info' };
  const config = {
    baseUrl: sim.url,
    database: join(dir, 'mirror.db'),
    redis: { prefix: h.prefix },
    tenants: [{ slug: t.slug, apiKeyEnv: 'W_KEY' }],
    api: {
      rateLimit: RATE,
      tokens: [
        { name: 'writer', tokenEnv: 'WRITER_TOKEN', tenants: '*', scopes: ['write', 'read'] },
        { name: 'reader', tokenEnv: 'READER_TOKEN', tenants: '*', scopes: ['read'] },
        { name: 'burst', tokenEnv: 'BURST_TOKEN', tenants: '*', scopes: ['read'] },
      ],
    },
  };
  writeFileSync(h.configPath, JSON.stringify(config));
  serve = await startServe({
    config: parseConfig(config),
    configPath: h.configPath,
    env: { ...h.env, WRITER_TOKEN: TOKENS.writer, READER_TOKEN: TOKENS.reader, BURST_TOKEN: TOKENS.burst },
    log: createLogger({ level: 'silent' }),
    port: 0,
    opsPort: 0,
  });
}, 60_000);
afterAll(async () => {
  await serve?.close();
  await server?.stop();
  await sim?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const call = (path: string, init: RequestInit & { bearer?: string } = {}) =>
  fetch(`${serve.url}${path}`, {
    ...init,
    headers: {
      'content-type': 'application/json',
      ...(init.bearer ? { authorization: `Bearer ${init.bearer}` } : {}),
    },
  });

describe('serve as the operator sees it', () => {
  it('counts requests with a latency histogram by route and status, and 401/403/429 by token name on /metrics', async () => {
    const instance = sim.controls.docs(h.tenant, 'event-instances')[0];
    const path = `/partners/2026-02/${h.tenant}/event-instances/${String(instance?.id)}`;
    const body = JSON.stringify({ ticketingSystemId: 'box-7' });
    expect((await call(path, { method: 'PATCH', body, bearer: TOKENS.writer })).status).toBe(202);
    expect((await call(path, { method: 'PATCH', body })).status).toBe(401);
    expect((await call(path, { method: 'PATCH', body, bearer: 'not-a-configured-token-at-all' })).status).toBe(401);
    expect((await call(path, { method: 'PATCH', body, bearer: TOKENS.reader })).status).toBe(403);
    const burst = [];
    for (let i = 0; i <= RATE; i++)
      burst.push((await call('/v1/writes?state=failed', { bearer: TOKENS.burst })).status);
    expect(burst).toEqual([200, 200, 200, 429]);

    const res = await fetch(`${serve.opsUrl}/metrics`);
    const text = await res.text();
    for (const t of Object.values(TOKENS)) expect(text).not.toContain(t);
    const { types, samples } = parsePrometheus(text);
    expect(types.get('understudy_serve_requests_total')).toBe('counter');
    expect(types.get('understudy_serve_request_duration_seconds')).toBe('histogram');
    const value = (name: string, labels: Record<string, string>) =>
      samples
        .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
        .reduce((n, s) => n + s.value, 0);
    const route = '/partners/:version/:tenant/:collection/:id';
    expect(value('understudy_serve_requests_total', { route, method: 'PATCH', status: '202' })).toBe(1);
    expect(value('understudy_serve_requests_total', { method: 'PATCH', status: '401' })).toBe(2);
    expect(value('understudy_serve_requests_total', { method: 'PATCH', status: '403' })).toBe(1);
    expect(value('understudy_serve_requests_total', { route: '/v1/writes', method: 'GET', status: '200' })).toBe(RATE);
    expect(value('understudy_serve_requests_total', { method: 'GET', status: '429' })).toBe(1);
    // The histogram: one observation of the 202, in a bucket as wide as every other (+Inf holds all).
    const hist = { route, method: 'PATCH', status: '202' };
    expect(value('understudy_serve_request_duration_seconds_count', hist)).toBe(1);
    expect(value('understudy_serve_request_duration_seconds_bucket', { ...hist, le: '+Inf' })).toBe(1);
    expect(value('understudy_serve_request_duration_seconds_sum', hist)).toBeGreaterThan(0);
    // Refusals by the token's name; a 401 knows no name.
    expect(value('understudy_serve_refused_total', { status: '401', token: 'unknown' })).toBe(2);
    expect(value('understudy_serve_refused_total', { status: '403', token: 'reader' })).toBe(1);
    expect(value('understudy_serve_refused_total', { status: '429', token: 'burst' })).toBe(1);
    expect(value('understudy_serve_refused_total', { token: 'writer' })).toBe(0);
  });

  it('status lists the serve processes seen in the last minute, in text and --json', async () => {
    // status reads the mirror: one sync makes it.
    const synced = await runCli(['sync', '--config', h.configPath, '--collection', 'series'], { env: h.env });
    expect(synced.code, synced.stderr).toBe(0);
    // A process that stopped beating two minutes ago is not listed.
    const redis = new Redis(server.url);
    const gone = { host: 'gone-host', pid: 4242, url: 'http://10.0.0.9:8080', startedAt: '2026-01-01T00:00:00.000Z' };
    await redis.zadd(serveProcessesKey(h.prefix), Date.now() - 120_000, JSON.stringify(gone));
    redis.disconnect();

    const json = await runCli(['status', '--config', h.configPath, '--json'], { env: h.env });
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout) as {
      serve: { host: string; pid: number; url: string; lastSeenAt: string }[];
    };
    expect(report.serve).toHaveLength(1);
    expect(report.serve[0]).toMatchObject({ pid: process.pid, url: serve.url });
    expect(Date.now() - Date.parse(report.serve[0]?.lastSeenAt ?? '')).toBeLessThan(60_000);

    const text = await runCli(['status', '--config', h.configPath], { env: h.env });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('serve processes (seen in the last minute):');
    const line = text.stdout.split('\n').find((l) => l.includes(serve.url)) ?? '';
    expect(line).toContain(String(process.pid));
    expect(text.stdout).not.toContain('gone-host');
  });

  it('answers 503 US_REDIS with Retry-After while Redis is down, and again once it is back', async () => {
    await server.down();
    try {
      const res = await call('/v1/writes?state=failed', { bearer: TOKENS.writer });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(await res.json()).toMatchObject({ status: 503, code: 'US_REDIS' });
    } finally {
      await server.restart();
    }
    await vi.waitFor(
      async () => expect((await call('/v1/writes?state=failed', { bearer: TOKENS.writer })).status).toBe(200),
      {
        timeout: 20_000,
        interval: 200,
      },
    );
  });

  it('status still works with Redis unreachable, and says serve processes are unknown', async () => {
    await serve.close();
    const none = await runCli(['status', '--config', h.configPath], { env: h.env });
    expect(none.stdout).toContain('serve: no process seen in the last minute');
    await server.kill();
    const json = await runCli(['status', '--config', h.configPath, '--json'], { env: h.env });
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout) as { redis: { ok: boolean }; serve: unknown; tenants: unknown[] };
    expect(report.redis.ok).toBe(false);
    expect(report.serve).toBeNull();
    expect(report.tenants).toHaveLength(1);
    const text = await runCli(['status', '--config', h.configPath], { env: h.env });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/Redis unreachable.*queue, schedule and serve process status unavailable/);
    await server.restart();
  });
});
