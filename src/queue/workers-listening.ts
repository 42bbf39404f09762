import type { Redis } from 'ioredis';
import { openSyncQueue } from './queues.js';

/**
 * Whether a worker listens on the sync queue now (BullMQ names its connections; CLIENT LIST finds them), so a
 * command can queue work for it instead of doing it here. Over a connection the caller owns.
 */
export async function workersListening(redis: Redis, prefix: string): Promise<boolean> {
  const queue = openSyncQueue(redis, prefix);
  queue.on('error', () => {});
  try {
    return (await queue.getWorkersCount()) > 0;
  } finally {
    await queue.close().catch(() => {});
  }
}
