import { randomBytes, randomUUID } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { createApp } from '../../src/app/create-app.js';
import { startChangeWorker } from '../../src/app/start-change-worker.js';
import { startSyncWorker } from '../../src/app/start-sync-worker.js';
import { startWatch } from '../../src/app/start-watch.js';
import { startWriteWorker } from '../../src/app/start-write-worker.js';
import { parseConfig } from '../../src/config/load-config.js';
import { createLogger } from '../../src/log.js';
import { createOpsMetrics } from '../../src/ops/metrics.js';
import { collectionLockKey } from '../../src/queue/collection-lock.js';
import { createWriteQueue } from '../../src/queue/write-queue.js';
import { startSimulator } from '../../src/sim/start-simulator.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';
import { tempDir } from './worker-harness.js';

/** Every BullMQ queue and worker and every Redis connection (duplicates too) the code under test makes. */
const made = vi.hoisted(() => [] as { kind: string; name: string; emitter: EventEmitter }[]);

vi.mock('bullmq', async (importOriginal) => {
  const m = await importOriginal<typeof import('bullmq')>();
  class Queue extends m.Queue {
    constructor(...args: ConstructorParameters<typeof m.Queue>) {
      super(...args);
      made.push({ kind: 'Queue', name: args[0], emitter: this });
    }
  }
  class Worker extends m.Worker {
    constructor(...args: ConstructorParameters<typeof m.Worker>) {
      super(...args);
      made.push({ kind: 'Worker', name: args[0], emitter: this });
    }
  }
  return { ...m, Queue, Worker };
});

vi.mock('ioredis', async (importOriginal) => {
  const m = await importOriginal<typeof import('ioredis')>();
  class CensusRedis extends m.Redis {
    constructor(...args: unknown[]) {
      super(...(args as []));
      made.push({ kind: 'Redis', name: String(this.options.connectionName ?? ''), emitter: this });
    }
    override duplicate(...args: Parameters<InstanceType<typeof m.Redis>['duplicate']>) {
      const d = super.duplicate(...args);
      made.push({ kind: 'Redis duplicate', name: String(d.options.connectionName ?? ''), emitter: d });
      return d;
    }
  }
  return { ...m, Redis: CensusRedis, default: CensusRedis };
});

/** BullMQ's own listeners on a connection it uses (removed when it lets go): not the app's. */
const BULLMQ_LISTENERS = new Set(['handleClientError', 'handleError']);
const ownListeners = (e: EventEmitter): number =>
  e.listeners('error').filter((f) => !BULLMQ_LISTENERS.has((f as { name?: string }).name ?? '')).length;

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

describe('error listeners', () => {
  it('every queue, worker and Redis connection of a worker with every part running listens to its errors', async () => {
    const sim = await startSimulator({ port: 0, readLimit: 0, writeLimit: 0, records: 6, maxLimit: 5, tenants: 1 });
    onTestFinished(() => sim.close());
    const t = sim.tenants[0];
    if (!t) throw new Error('no tenant');
    const prefix = `t-${randomUUID()}`;
    const config = parseConfig({
      baseUrl: sim.url,
      database: join(tempDir(), 'mirror.db'),
      redis: { prefix },
      watch: true,
      tenants: [
        {
          slug: t.slug,
          apiKeyEnv: 'K',
          schedule: { incrementalEveryMinutes: 0, fullCron: '0 3 * * *', checkCron: '* * * * *', timezone: 'UTC' },
          webhooks: [{ url: 'http://127.0.0.1:9/hook', secretEnv: 'HOOK_SECRET' }],
        },
      ],
    });
    const env = { K: t.key, REDIS_URL: server.url, HOOK_SECRET: `whsec_${randomBytes(24).toString('base64')}` };
    const logs = new PassThrough();
    let logText = '';
    logs.on('data', (c: Buffer) => {
      logText += c.toString();
    });
    const log = createLogger({ level: 'info', destination: logs });
    // The parts `understudy worker` starts (src/cli/worker-command.ts), in its order.
    const stop = new AbortController();
    const app = await createApp(config, env, {
      profile: 'worker',
      log,
      signal: stop.signal,
      metrics: createOpsMetrics(),
    });
    const sync = startSyncWorker(app);
    const watch = startWatch(app, { signal: stop.signal });
    const writes = await startWriteWorker(app);
    const changes = await startChangeWorker(app);
    const running = sync.run(stop.signal);
    onTestFinished(async () => {
      stop.abort();
      await running;
      for (const part of [changes, writes, watch, sync, app]) await part[Symbol.asyncDispose]();
    });

    // A bulk write whose sync is queued (another run holds the collection): the write worker opens the sync queue.
    const [org] = sim.controls.docs(t.slug, 'organizations');
    const lock = new Redis(server.url);
    lock.on('error', () => {});
    await lock.set(collectionLockKey(prefix, t.slug, 'organizations'), 'another-run', 'PX', 60_000);
    lock.disconnect();
    const client = await createWriteQueue({ redisUrl: server.url, prefix, onWarning: () => {} });
    await client.bulk(t.slug, 'organizations', { ids: [String(org?.id)], set: { region: 'north' } });
    await client.close();
    await vi.waitFor(() => expect(logText).toMatch(/"bulk write: incremental sync queued"/), { timeout: 20_000 });

    const kinds = made.map((m) => `${m.kind} ${m.name}`);
    // The census saw what the worker makes: its four workers, the lazily opened sync queue, the blocking duplicates.
    expect(kinds.filter((k) => k.startsWith('Worker '))).toHaveLength(4);
    expect(kinds.filter((k) => k === 'Queue sync')).toHaveLength(2);
    expect(kinds.filter((k) => k.startsWith('Redis duplicate')).length).toBeGreaterThanOrEqual(4);
    const unheard = made.filter((m) => ownListeners(m.emitter) === 0).map((m) => `${m.kind} ${m.name}`);
    expect(unheard).toEqual([]);
  });
});
