import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import { isRedisConnectionError } from '../queue/redis-settings.js';

/** A long-running command (worker, serve) logs an unhandled rejection and goes on; see below. */
export function keepGoingOnRejections(log: Logger, stopping: AbortSignal, who: string): void {
  // An unhandled rejection is a bug (each has a test once found), but one job's failure must never take the
  // worker down with every other tenant's syncs, writes and webhooks: it is logged at error level and the worker
  // goes on. BullMQ can leave a command of a connection it is closing rejected with no handler
  // (taskforcesh/bullmq#3546): once shutdown has begun, such a Redis connection error says nothing about the work
  // and is logged at debug only. Kept to the end of the process: the rejection may come after this command returns.
  process.on('unhandledRejection', (reason: unknown) => {
    if (stopping.aborted && isRedisConnectionError(reason)) {
      log.debug({ reason: describeError(reason) }, 'Redis connection error while closing; ignored');
      return;
    }
    log.error({ err: reason }, `unhandled rejection (a bug, please report it); ${who} goes on`);
  });
}
