import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Redis } from 'ioredis';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { type App, createApp } from '../../src/app/create-app.js';
import { startChangeWorker } from '../../src/app/start-change-worker.js';
import type { Change } from '../../src/changes/change-log-port.js';
import { WEBHOOK_RETRY_DELAYS_MS } from '../../src/changes/retry-schedule.js';
import { endpointId } from '../../src/changes/webhook-endpoints.js';
import { parseConfig } from '../../src/config/load-config.js';
import { createLogger } from '../../src/log.js';
import { createOpsMetrics } from '../../src/ops/metrics.js';
import { errorsFailTheCalls } from '../../src/queue/error-listeners.js';
import { listFailedWebhooks, openWebhookQueue, retryWebhook } from '../../src/queue/webhook-queue.js';
import { startSimulator } from '../../src/sim/start-simulator.js';
import { PUBLISHED } from '../../src/sync/store-port.js';
import { tenantSlug } from '../../src/vocabulary/ids.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { tempDir } from '../helpers/sync-harness.js';

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

interface Delivery {
  readonly id: string;
  readonly ok: boolean;
  readonly changes: Change[];
}

/** A webhook receiver verifying every request with the official `standardwebhooks` package. */
async function receiver(secret: string, answer: (d: Delivery, req: IncomingMessage) => number | 'hang') {
  const wh = new Webhook(secret);
  const deliveries: Delivery[] = [];
  const hung: ServerResponse[] = [];
  const http = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = Buffer.concat(parts).toString('utf8');
      let ok = false;
      let changes: Change[] = [];
      try {
        const payload = wh.verify(body, req.headers as Record<string, string>) as { data: { changes: Change[] } };
        ok = true;
        changes = payload.data.changes;
      } catch {}
      const d = { id: String(req.headers['webhook-id']), ok, changes };
      deliveries.push(d);
      const status = ok ? answer(d, req) : 401;
      if (status === 'hang') hung.push(res);
      else res.writeHead(status).end();
    });
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  onTestFinished(async () => {
    for (const r of hung) r.destroy();
    http.closeAllConnections();
    await new Promise((r) => http.close(r));
  });
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/hook`;
  /** The changes received, once per webhook-id, in arrival order. */
  const unique = () => {
    const seen = new Set<string>();
    return deliveries.filter((d) => d.ok && !seen.has(d.id) && seen.add(d.id)).flatMap((d) => d.changes);
  };
  return { url, deliveries, unique };
}

const secretOf = () => `whsec_${randomBytes(24).toString('base64')}`;

async function setup(
  hooks: { url: string; secretEnv: string; kinds?: string[] }[],
  secrets: Record<string, string>,
  tenantExtra: object = {},
) {
  const sim = await startSimulator({ port: 0, readLimit: 0, writeLimit: 0, records: 4, tenants: 1 });
  onTestFinished(() => sim.close());
  const t = sim.tenants[0];
  if (!t) throw new Error('no tenant');
  const db = join(tempDir(), 'mirror.db');
  const prefix = `t-${randomUUID()}`;
  const config = parseConfig({
    baseUrl: sim.url,
    database: db,
    redis: { prefix },
    tenants: [{ slug: t.slug, apiKeyEnv: 'W_KEY', webhooks: hooks, ...tenantExtra }],
  });
  const logs = new PassThrough();
  let logText = '';
  logs.on('data', (c: Buffer) => {
    logText += c.toString();
  });
  const env = { W_KEY: t.key, REDIS_URL: server.url, ...secrets };
  const app: App = await createApp(config, env, {
    log: createLogger({ level: 'debug', destination: logs }),
    gates: 'redis',
    metrics: createOpsMetrics({ processMetrics: false }),
  });
  onTestFinished(() => app.close());
  const key = { tenant: tenantSlug(t.slug), collection: 'events' as const, variant: PUBLISHED };
  let n = 0;
  /** Commits `count` new events, as a sync page would. */
  const commit = async (count: number) => {
    const docs = Array.from({ length: count }, () => ({
      id: `e${++n}`,
      updatedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
      title: `E${n}`,
    }));
    await app.store.write(key, { upserts: docs, runId: 'run-1' });
  };
  return { app, db, prefix, key, commit, slug: t.slug, logs: () => logText };
}

describe('signed webhooks', () => {
  it('a receiver verifies every signature and gets every change once, in order, across an outage of minutes', async () => {
    const secret = secretOf();
    let virtualMs = 0; // the production schedule's time, advanced by each retry's wait instead of waiting it
    let downUntil = -1;
    let lostAcks = 1;
    const a = await receiver(secret, () => {
      if (virtualMs < downUntil) return 503;
      // The first delivery after the outage is received but its answer is lost: sent again, same webhook-id.
      if (downUntil > 0 && lostAcks-- > 0) return 500;
      return 200;
    });
    const h = await setup([{ url: a.url, secretEnv: 'HOOK_SECRET' }], { HOOK_SECRET: secret });
    const worker = await startChangeWorker(h.app, {
      pollMs: 20,
      backoff: (retry) => {
        virtualMs += WEBHOOK_RETRY_DELAYS_MS[retry - 1] ?? 0;
        return 5;
      },
    });
    onTestFinished(() => worker.close());
    await worker.dispatch(); // the endpoint starts at the end of the (empty) log
    await h.commit(150);
    await vi.waitFor(() => expect(a.unique().length).toBe(150), { timeout: 20_000 });

    downUntil = virtualMs + 6 * 60_000; // the receiver is gone for six minutes of the retry schedule
    const before = a.deliveries.length;
    await h.commit(3);
    await vi.waitFor(() => expect(a.deliveries.length).toBeGreaterThan(before + 1));
    await h.app.store.write(h.key, { deletes: ['e2'], source: 'write', runId: 'job-1' });
    await h.commit(120);
    const log = await h.app.changes.read({ tenants: [h.slug] });
    await vi.waitFor(() => expect(a.unique().length).toBe(log.length), { timeout: 30_000 });

    expect(virtualMs).toBeGreaterThanOrEqual(6 * 60_000);
    expect(a.deliveries.every((d) => d.ok)).toBe(true);
    expect(a.unique().map((c) => c.seq)).toEqual(log.map((c) => c.seq));
    expect(a.unique().find((c) => c.kind === 'delete')).toMatchObject({ id: 'e2', source: 'write' });
    expect(a.deliveries.every((d) => d.changes.length <= 100 && d.changes.every((c) => 'updated_at_after' in c))).toBe(
      true,
    );
    // The lost answer made one repeat, under the same id.
    expect(
      a.deliveries.filter((d) => d.ok).length - new Set(a.deliveries.map((d) => d.id)).size,
    ).toBeGreaterThanOrEqual(1);
    // The endpoint's position moves once the delivery job has finished, a moment after the receiver answered.
    await vi.waitFor(async () => expect((await h.app.changes.endpoints())[0]?.deliveredSeq).toBe(log.at(-1)?.seq));
    const [state] = await h.app.changes.endpoints();

    // The secret is in no log line, no Redis value and not in the mirror.
    expect(h.logs()).not.toContain(secret.slice(6));
    const redis = new Redis(server.url);
    onTestFinished(() => redis.disconnect());
    const dump: string[] = [];
    for (const k of await redis.keys(`${h.prefix}:*`)) {
      const type = await redis.type(k);
      if (type === 'hash') dump.push(JSON.stringify(await redis.hgetall(k)));
      else if (type === 'string') dump.push(String(await redis.get(k)));
      else if (type === 'list') dump.push(...(await redis.lrange(k, 0, -1)));
    }
    expect(dump.join('\n')).toContain(state?.id);
    expect(dump.join('\n')).not.toContain(secret.slice(6));
    expect(readFileSync(h.db).toString('latin1')).not.toContain(secret.slice(6));
  });

  it('a 410 disables its endpoint; a hanging one delays no other; a dead-lettered batch is retried by hand', async () => {
    const secret = secretOf();
    let failB = true;
    const gone = await receiver(secret, () => 410);
    const hanging = await receiver(secret, () => 'hang');
    const flaky = await receiver(secret, () => (failB ? 500 : 200));
    const fine = await receiver(secret, () => 200);
    const h = await setup(
      [
        { url: gone.url.replace('/hook', '/gone'), secretEnv: 'S' },
        { url: hanging.url, secretEnv: 'S' },
        { url: flaky.url, secretEnv: 'S', kinds: ['insert'] },
        { url: fine.url, secretEnv: 'S' },
      ],
      { S: secret },
    );
    const worker = await startChangeWorker(h.app, { pollMs: 20, attempts: 3, backoff: () => 5, graceMs: 50 });
    onTestFinished(() => worker.close());
    const queue = openWebhookQueue(h.app.redis as Redis, h.prefix, errorsFailTheCalls);
    onTestFinished(() => queue.close());
    await worker.dispatch();
    await h.commit(2);
    await vi.waitFor(() => expect(fine.unique().length).toBe(2));
    await vi.waitFor(async () => expect((await listFailedWebhooks(queue)).length).toBe(2));
    await h.commit(2);
    await vi.waitFor(() => expect(fine.unique().length).toBe(4));
    await vi.waitFor(() => expect(flaky.deliveries.length).toBe(6));

    // The 410: one delivery only, the endpoint disabled; the hanging one has its first request still open.
    expect(gone.deliveries.length).toBe(1);
    expect(hanging.deliveries.length).toBeGreaterThanOrEqual(1);
    const states = await h.app.changes.endpoints();
    expect(states.find((s) => s.id === endpointId(h.slug, gone.url.replace('/hook', '/gone')))?.disabledReason).toBe(
      'HTTP 410 Gone',
    );
    // The flaky one: each batch dead-lettered after 3 attempts, the next sent all the same; a retry sends it again.
    // (The third answer of a batch reaches the receiver before BullMQ marks its job failed: wait for both.)
    const flakyId = endpointId(h.slug, flaky.url);
    const deadLettered = async () => (await listFailedWebhooks(queue)).filter((f) => f.endpoint === flakyId);
    await vi.waitFor(async () => expect(await deadLettered()).toHaveLength(2));
    const dead = await deadLettered();
    expect(dead.map((f) => f.attempts)).toEqual([3, 3]);
    failB = false;
    for (const f of dead) await retryWebhook(queue, f.jobId);
    await vi.waitFor(() =>
      expect(
        flaky
          .unique()
          .map((c) => c.id)
          .sort(),
      ).toEqual(['e1', 'e2', 'e3', 'e4']),
    );
    expect(new Set(flaky.deliveries.map((d) => d.id)).size).toBe(2);
  });

  it('runs the self-check on schedule.checkCron, keeps it for status and exports the drift per collection', async () => {
    const schedule = { incrementalEveryMinutes: 0, fullCron: null, checkCron: '* * * * * *' };
    const h = await setup([], {}, { collections: ['series', 'events'], schedule });
    await h.commit(1); // one event in the mirror; the simulator has more, and no series is mirrored
    const worker = await startChangeWorker(h.app, { pollMs: 20 });
    onTestFinished(() => worker.close());
    await vi.waitFor(async () => expect((await h.app.changes.lastChecks()).length).toBe(2), { timeout: 20_000 });
    const checks = await h.app.changes.lastChecks();
    const events = checks.find((c) => c.collection === 'events');
    expect(events).toMatchObject({ tenant: h.slug, variant: 'published', local: 1 });
    expect(events?.drift).toBe((events?.upstream ?? 0) - 1);
    const text = await h.app.metrics?.text();
    expect(text).toContain(`understudy_mirror_drift_records{tenant="${h.slug}",collection="events"} ${events?.drift}`);
  });
});
