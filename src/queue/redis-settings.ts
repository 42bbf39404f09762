import { Redis, type RedisOptions } from 'ioredis';
import type { Config } from '../config/config-schema.js';
import { isUnderstudyError, UnderstudyError } from '../errors.js';
import type { Logger } from '../log.js';
import { redactUrl } from '../vocabulary/redact-url.js';
import { DEFAULT_PREFIX, DEFAULT_REDIS_URL } from './queues.js';
import { endWhenStoppedUnreachable, followDuplicates } from './redis-at-stop.js';

export interface RedisSettings {
  readonly url: string;
  readonly prefix: string;
}

/** Where Redis is: `REDIS_URL` wins over config `redis.url` (default redis://127.0.0.1:6379); prefix from config. */
export function redisSettings(
  config: Pick<Config, 'redis'> | null,
  env: NodeJS.ProcessEnv = process.env,
): RedisSettings {
  return {
    url: env.REDIS_URL || config?.redis?.url || DEFAULT_REDIS_URL,
    prefix: config?.redis?.prefix ?? DEFAULT_PREFIX,
  };
}

/** The URL without any password, for logs and messages. */
export const redactRedisUrl = (url: string): string => redactUrl(url, 'password', 'redis://(unparseable url)');

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** Whether an error only says the connection to Redis is down (which the connection's own back-off line reports). */
export const isRedisConnectionError = (err: unknown): boolean =>
  err instanceof Error &&
  (err.message.startsWith('Connection is closed') ||
    CONNECTION_CODES.has((err as NodeJS.ErrnoException).code ?? '') ||
    /^connect (ECONNREFUSED|ETIMEDOUT|EHOSTUNREACH)/.test(err.message));

/**
 * A connection for a long-lived process: commands wait through outages instead of failing
 * (`maxRetriesPerRequest: null`, as BullMQ workers require) and ioredis reconnects with backoff. While Redis is
 * down it logs one line per back-off (`Redis unreachable …; next attempt in N ms`), and one when it is back. Once
 * `stopping` aborts it no longer waits for Redis: unreachable then, it and its duplicates end at once, with one
 * line (`Redis unreachable at stop …`); dropping later, it ends instead of reconnecting (src/queue/redis-at-stop.ts).
 */
export function longLivedRedis(url: string, log: Logger, name: string, stopping?: AbortSignal): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: null,
    retryStrategy: (times) => (stopping?.aborted ? null : Math.min(200 * times, 2000)),
    // How long a closing socket may stay half-open. ioredis arms this timer on every disconnect, also of a socket
    // already gone (a connection ended while Redis is down), where it only holds the stopping process: kept short.
    disconnectTimeout: 500,
    connectionName: `understudy-${name}`,
  });
  let down = false;
  let reason = 'connection lost';
  let attempt = 0;
  redis.on('error', (err: Error) => {
    if (isRedisConnectionError(err)) reason = err.message;
    else log.warn({ redis: name, reason: err.message }, 'redis error');
  });
  redis.on('reconnecting', (delayMs: number) => {
    down = true;
    attempt++;
    log.warn(
      { redis: name, url: redactRedisUrl(url), reason, attempt, retryInMs: delayMs },
      `Redis unreachable (${reason}); next attempt in ${delayMs} ms`,
    );
  });
  redis.on('ready', () => {
    if (down) log.info({ redis: name, attempts: attempt }, 'redis connection back');
    down = false;
    attempt = 0;
  });
  // BullMQ's duplicates (a worker's blocking reads) get a listener of their own, whoever made the connection.
  const duplicates = followDuplicates(redis);
  if (stopping)
    endWhenStoppedUnreachable(redis, duplicates, stopping, () =>
      log.warn(
        { redis: name, url: redactRedisUrl(url), reason, status: redis.status },
        `Redis unreachable at stop (${reason}): its connections are closed now rather than waited for; ` +
          'jobs in flight are taken up again once their locks expire',
      ),
    );
  return redis;
}

/** How long a worker waits for Redis at its first start before it gives up (`worker.redisStartTimeoutMs`). */
export const DEFAULT_REDIS_START_TIMEOUT_MS = 30_000;

/**
 * Waits for a long-lived connection's first `ready`, at most `timeoutMs`: a process that never reached Redis stops
 * with one line (`US_REDIS`) so that its supervisor restarts it and says why, instead of retrying for ever. Once it
 * has been ready, the connection reconnects through outages as before. A stop asked for meanwhile (`signal`) ends
 * the wait at once, without an error: the process then stops as it would have.
 */
export function firstReady(redis: Redis, url: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  if (redis.status === 'ready' || signal?.aborted) return Promise.resolve();
  return new Promise((resolve, reject) => {
    let reason = 'no answer';
    const onError = (err: Error) => {
      reason = err.message;
    };
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      redis.off('error', onError);
      signal?.removeEventListener('abort', onReady);
    };
    const onReady = () => {
      done();
      resolve();
    };
    const timer = setTimeout(() => {
      done();
      const s = Math.round(timeoutMs / 100) / 10;
      reject(
        new UnderstudyError(
          'US_REDIS',
          `Redis unreachable at ${redactRedisUrl(url)}: no connection within ${s} s of starting (${reason}); ` +
            'start Redis or fix REDIS_URL / config redis.url (the wait is config worker.redisStartTimeoutMs)',
        ),
      );
    }, timeoutMs);
    redis.on('ready', onReady);
    redis.on('error', onError);
    signal?.addEventListener('abort', onReady, { once: true });
  });
}

/** A connection for a short command: fails within about `timeoutMs` when Redis is not there. */
export async function shortLivedRedis(url: string, timeoutMs = 2000, extra: RedisOptions = {}): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    retryStrategy: () => null,
    ...extra,
  });
  // The connection's own error says why (`connect ECONNREFUSED …`); connect() itself only "Connection is closed".
  let why: Error | null = null;
  redis.on('error', (err: Error) => {
    why ??= err;
  });
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect();
    const cause = why ?? (err as Error);
    throw new UnderstudyError('US_REDIS', `Redis unreachable at ${redactRedisUrl(url)}: ${cause.message}`, {
      cause,
    });
  }
  return redis;
}

/** Any error of a queue call as an `UnderstudyError`: Redis and BullMQ failures become `US_REDIS`. */
export const asUnderstudyError = (err: unknown): UnderstudyError => {
  if (isUnderstudyError(err)) return err;
  if (err instanceof Error && err.name === 'AbortError')
    return new UnderstudyError('US_ABORTED', 'aborted', { cause: err });
  return new UnderstudyError('US_REDIS', `Redis: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
};

/** Warns unless Redis evicts nothing: an evicting Redis silently loses jobs and locks under memory pressure. */
export async function checkEvictionPolicy(redis: Redis, log: Logger): Promise<string | null> {
  try {
    const reply = (await redis.config('GET', 'maxmemory-policy')) as string[];
    const policy = reply[1] ?? null;
    if (policy && policy !== 'noeviction') {
      log.warn(
        { policy },
        'Redis maxmemory-policy is not noeviction: jobs and locks may be evicted; set it to noeviction',
      );
    }
    return policy;
  } catch (err) {
    // Managed Redis services often refuse CONFIG; nothing to check then.
    log.debug({ reason: (err as Error).message }, 'cannot read maxmemory-policy');
    return null;
  }
}
