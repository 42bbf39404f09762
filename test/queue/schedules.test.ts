import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { TenantConfig } from '../../src/config/config-schema.js';
import { createLogger } from '../../src/log.js';
import { errorsFailTheCalls } from '../../src/queue/error-listeners.js';
import { openSyncQueue } from '../../src/queue/queues.js';
import { nextRuns, reconcileSchedules, type ScheduleSpec, schedulesFor } from '../../src/queue/schedules.js';
import { tenantSlug } from '../../src/vocabulary/ids.js';
import { startRedis, type TestRedis } from '../helpers/redis-server.js';

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server?.stop();
});

const log = createLogger({ level: 'silent' });

describe('reconcileSchedules', () => {
  it("keeps every other tenant's schedulers when one tenant's cannot be created", async () => {
    const redis = new Redis(server.url, { maxRetriesPerRequest: null });
    const queue = openSyncQueue(redis, `t-${randomUUID()}`, errorsFailTheCalls);
    onTestFinished(async () => {
      await queue.close();
      redis.disconnect();
    });
    const good: TenantConfig[] = ['first', 'third'].map((slug) => ({
      slug,
      apiKeyEnv: 'K',
      drafts: false,
      schedule: { incrementalEveryMinutes: 15, fullCron: '0 3 * * *', timezone: 'Europe/London' },
    }));
    // Past config validation (another version's config, or a zone this runtime lacks): BullMQ refuses it.
    const broken: ScheduleSpec = {
      id: 'full.second',
      repeat: { pattern: '0 3 * * *', tz: 'Mars/Olympus_Mons' },
      data: { tenant: tenantSlug('second'), mode: 'full' },
    };
    const [a, ...rest] = schedulesFor(good);
    if (!a) throw new Error('no schedules');
    const result = await reconcileSchedules(queue, [a, broken, ...rest], log);
    expect(result.failed).toEqual([{ id: 'full.second', reason: expect.any(String) }]);
    const runs = await nextRuns(queue);
    expect(runs.map((r) => r.id).sort()).toEqual([
      'full.first',
      'full.third',
      'incremental.first',
      'incremental.third',
    ]);
    expect(runs.every((r) => typeof r.next === 'number')).toBe(true);
  });
});
