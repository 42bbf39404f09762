import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { errorsFailTheCalls } from './error-listeners.js';
import { openSyncQueue } from './queues.js';

/**
 * Why a job added to `queue` would wait for ever, or `null`: no worker listens on that queue under its prefix now
 * (BullMQ names its workers' connections; CLIENT LIST finds them). `null` too when Redis will not say (some hosted
 * Redis refuse CLIENT LIST): a warning must never be a false alarm.
 */
export async function noWorkerOn(queue: Pick<Queue, 'name' | 'opts' | 'getWorkersCount'>): Promise<string | null> {
  const workers = await queue.getWorkersCount().catch(() => null);
  return workers === 0 ? `no worker is listening on the ${queue.name} queue under prefix "${queue.opts.prefix}"` : null;
}

/**
 * Whether a worker listens on the sync queue now (BullMQ names its connections; CLIENT LIST finds them), so a
 * command can queue work for it instead of doing it here. Over a connection the caller owns.
 */
export async function workersListening(redis: Redis, prefix: string): Promise<boolean> {
  const queue = openSyncQueue(redis, prefix, errorsFailTheCalls);
  try {
    return (await queue.getWorkersCount()) > 0;
  } finally {
    await queue.close().catch(() => {});
  }
}
