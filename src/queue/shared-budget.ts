import type { Redis } from 'ioredis';
import type { Config } from '../config/config-schema.js';
import { UnderstudyError } from '../errors.js';
import type { Logger } from '../log.js';
import { longLivedRedis, redactRedisUrl } from './redis-settings.js';

/** Whether Redis is configured for this run: config `redis` or `REDIS_URL`. */
export const redisConfigured = (config: Pick<Config, 'redis'>, env: NodeJS.ProcessEnv): boolean =>
  config.redis !== undefined || Boolean(env.REDIS_URL);

/**
 * Connects to the Redis where the keys' rate budget is shared with the workers, for an inline command: a
 * long-lived connection, returned once it answers a PING. Fails with `US_REDIS` within `timeoutMs` when Redis does
 * not answer (`timeoutMs`): silently falling back to an in-process gate would spend the key's budget twice, once here and once
 * in the workers.
 */
export async function connectSharedBudget(
  url: string,
  log: Logger,
  stopping?: AbortSignal,
  timeoutMs = 3000,
): Promise<Redis> {
  // Stopping with Redis gone, the command's waits on the budget end rather than outlive the stop.
  const redis: Redis = longLivedRedis(url, log, 'budget', stopping);
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      redis.ping(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (err) {
    redis.disconnect();
    throw new UnderstudyError(
      'US_REDIS',
      `Redis unreachable at ${redactRedisUrl(url)} (${(err as Error).message}): the keys' rate budget is shared ` +
        'there (config redis / REDIS_URL); start Redis, or pass --local-budget to use this process alone',
      { cause: err },
    );
  } finally {
    clearTimeout(timer);
  }
  return redis;
}
