import type { Redis } from 'ioredis';
import { closeOnce } from '../close-all.js';
import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import type { ScheduleClock } from '../sync/schedule-clock.js';
import { isRedisConnectionError } from './redis-settings.js';

/** Deletes or extends the lock only while it still holds our token. KEYS: [lock]. ARGV: [token, ms?]. */
const RELEASE_LUA = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
const RENEW_LUA = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`;

type LockRedis = Redis & {
  understudyLockRelease(key: string, token: string): Promise<number>;
  understudyLockRenew(key: string, token: string, ms: number): Promise<number>;
};

const withCommands = (redis: Redis): LockRedis => {
  const r = redis as LockRedis;
  if (typeof r.understudyLockRelease !== 'function') {
    redis.defineCommand('understudyLockRelease', { numberOfKeys: 1, lua: RELEASE_LUA });
    redis.defineCommand('understudyLockRenew', { numberOfKeys: 1, lua: RENEW_LUA });
  }
  return r;
};

/** A held lock: renewed every third of its TTL until released. */
export interface HeldLock {
  /** Stops renewal and deletes the lock if it is still ours. Idempotent; never throws. */
  release(): Promise<void>;
}

export type LockAttempt =
  | { readonly held: true; readonly lock: HeldLock }
  | { readonly held: false; readonly retryInMs: number };

export const collectionLockKey = (prefix: string, tenant: string, collection: string): string =>
  `${prefix}:lock:sync:${tenant}:${collection}`;

/**
 * Takes the per tenant+collection sync lock (SET NX PX) across every process, or says when to try again.
 * A holder that dies stops renewing, so its lock expires after `ttlMs`.
 */
export async function tryCollectionLock(opts: {
  readonly redis: Redis;
  readonly key: string;
  readonly token: string;
  readonly ttlMs: number;
  /** Where the renewals tick. */
  readonly clock: Pick<ScheduleClock, 'every'>;
  readonly log: Logger;
}): Promise<LockAttempt> {
  const redis = withCommands(opts.redis);
  const { key, token, ttlMs, log } = opts;
  const ok = await redis.set(key, token, 'PX', ttlMs, 'NX');
  if (ok !== 'OK') {
    const pttl = await redis.pttl(key);
    // Try again when it expires, but at least every 2 s: a holder that finishes early deletes it.
    return { held: false, retryInMs: Math.max(100, Math.min(pttl > 0 ? pttl : ttlMs, 2000)) };
  }
  const renewals = opts.clock.every(Math.max(100, Math.floor(ttlMs / 3)), () => {
    // A failed renewal (Redis briefly away) is retried on the next tick; the TTL covers two missed ticks.
    redis.understudyLockRenew(key, token, ttlMs).then(
      (n) => {
        if (Number(n) === 0) log.warn({ lock: key }, 'sync lock lost: another process may take over');
      },
      (err: unknown) => {
        // Redis down is what the connection's own lines report; the TTL covers two missed ticks.
        if (!isRedisConnectionError(err))
          log.warn({ reason: describeError(err), lock: key }, 'sync lock renewal failed');
      },
    );
  });
  return {
    held: true,
    lock: {
      release: closeOnce(async () => {
        await renewals.stop();
        await redis.understudyLockRelease(key, token).catch((err: unknown) => {
          // Redis unreachable (at a stop, say): the connection's own lines say so.
          const level = isRedisConnectionError(err) ? 'debug' : 'warn';
          log[level]({ reason: describeError(err), lock: key }, 'sync lock release failed; it expires on its own');
        });
      }),
    },
  };
}
