import type { Redis } from 'ioredis';
import type { GateFactory } from '../app/create-app.js';
import type { Config } from '../config/config-schema.js';
import { UnderstudyError } from '../errors.js';
import type { Logger } from '../log.js';
import { createRedisRateGate } from './redis-rate-gate.js';
import { longLivedRedis, redactRedisUrl, redisSettings } from './redis-settings.js';

/** The Redis-backed rate budget an inline command shares with the workers on the same keys. */
export interface SharedBudget extends AsyncDisposable {
  /** Builds the Redis gate of one key; pass it to `createApp`. */
  readonly gateFor: GateFactory;
  /** Disconnects from Redis; idempotent. Close it after the app whose gates use it. */
  close(): Promise<void>;
}

/** Whether Redis is configured for this run: config `redis` or `REDIS_URL`. */
export const redisConfigured = (config: Pick<Config, 'redis'>, env: NodeJS.ProcessEnv): boolean =>
  config.redis !== undefined || Boolean(env.REDIS_URL);

/**
 * Opens the shared budget when Redis is configured (config `redis` or `REDIS_URL`), else returns null (the
 * in-process gate then applies). Fails with `US_REDIS` within `timeoutMs` when the configured Redis does not
 * answer: silently falling back would spend the key's budget twice, once here and once in the workers.
 */
export async function openSharedBudget(
  config: Pick<Config, 'redis'>,
  env: NodeJS.ProcessEnv,
  log: Logger,
  timeoutMs = 3000,
): Promise<SharedBudget | null> {
  if (!redisConfigured(config, env)) return null;
  const { url, prefix } = redisSettings(config, env);
  const redis: Redis = longLivedRedis(url, log, 'budget');
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
  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= redis.quit().then(
      () => undefined,
      () => redis.disconnect(),
    );
    return closing;
  };
  return {
    gateFor: (keyHash, budget) => createRedisRateGate({ redis, keyHash, budget, prefix }),
    close,
    [Symbol.asyncDispose]: close,
  };
}
