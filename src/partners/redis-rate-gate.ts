import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { UnderstudyError } from '../errors.js';
import type { RateBudget, RateGate, RequestKind } from './rate-gate.js';

/**
 * Admits one request or says how long to wait, atomically, on Redis' own clock (TIME), so processes on
 * different machines agree. KEYS: [window zset, pause key, epoch key]. ARGV: [limit, window ms, member, seen].
 * Returns 0 when admitted (the request is counted), else the milliseconds until a slot may free up.
 *
 * The epoch key (no expiry) says Redis still holds this key's history. A gate that has run the script before
 * (`seen` 1) and finds it gone knows Redis was emptied (FLUSHALL, a restart without persistence): the requests of
 * the current window are forgotten, so the key is paused for a whole window rather than admitting a fresh budget.
 */
const ACQUIRE_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('EXISTS', KEYS[3]) == 0 then
  redis.call('SET', KEYS[3], tostring(now))
  if ARGV[4] == '1' and redis.call('PTTL', KEYS[2]) < tonumber(ARGV[2]) then
    redis.call('SET', KEYS[2], 'lost', 'PX', ARGV[2])
  end
end
local paused = redis.call('PTTL', KEYS[2])
if paused > 0 then return paused end
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local wait = tonumber(oldest[2]) + window - now + 1
if wait < 1 then wait = 1 end
return wait
`;

/** Extends the key-wide pause to `ms` from now unless a longer one is already set. KEYS: [pause key]. */
const PAUSE_LUA = `
local ms = tonumber(ARGV[1])
if redis.call('PTTL', KEYS[1]) < ms then redis.call('SET', KEYS[1], '1', 'PX', ms) end
return 0
`;

type GateRedis = Redis & {
  understudyGateAcquire(
    win: string,
    pause: string,
    epoch: string,
    limit: number,
    windowMs: number,
    member: string,
    seen: 0 | 1,
  ): Promise<number>;
  understudyGatePause(pause: string, ms: number): Promise<number>;
};

const withCommands = (redis: Redis): GateRedis => {
  const r = redis as GateRedis;
  // defineCommand loads the script once per connection and calls it by EVALSHA from then on.
  if (typeof r.understudyGateAcquire !== 'function') {
    redis.defineCommand('understudyGateAcquire', { numberOfKeys: 3, lua: ACQUIRE_LUA });
    redis.defineCommand('understudyGatePause', { numberOfKeys: 1, lua: PAUSE_LUA });
  }
  return r;
};

export interface RedisRateGateOptions {
  /** A connection shared with other gates; the gate never closes it. */
  readonly redis: Redis;
  /** The hash of the API key (see key-hash.ts): the only form of the key Redis ever sees. */
  readonly keyHash: string;
  readonly budget: RateBudget;
  /** Key prefix, e.g. `understudy`; keys are `{prefix}:rate:{keyHash}:{read|write|pause}`. */
  readonly prefix: string;
  /**
   * Extra milliseconds each admitted request stays counted beyond the window, so a request admitted just after
   * the window rolls cannot reach the upstream before its predecessor's slot has expired there too
   * (network and event-loop jitter). Default 4% of the window, between 50 and 250 ms.
   */
  readonly marginMs?: number;
}

const abortError = (signal: AbortSignal): UnderstudyError =>
  new UnderstudyError('US_ABORTED', 'rate gate wait aborted', { cause: signal.reason });

/** Resolves after `ms` with one timer, or rejects as soon as `signal` aborts. */
const wait = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortError(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });

/**
 * The rate gate backed by Redis: a rolling window per key hash and kind in a sorted set, shared by every
 * process that uses the key, plus a key-wide pause (a 429 seen anywhere holds that key's requests everywhere).
 */
export function createRedisRateGate(opts: RedisRateGateOptions): RateGate {
  const { budget, prefix, keyHash } = opts;
  if (!/^[A-Za-z0-9_-]+$/.test(keyHash)) throw new TypeError('keyHash must be a hash (letters, digits, _ and -)');
  const redis = withCommands(opts.redis);
  const marginMs = opts.marginMs ?? Math.min(250, Math.max(50, Math.ceil(budget.windowMs / 25)));
  const base = `${prefix}:rate:${keyHash}`;
  const pauseKey = `${base}:pause`;
  const epochKey = `${base}:epoch`;
  // Whether this gate has run the script (so the epoch key existed after it): its absence then means data loss.
  let seen: 0 | 1 = 0;
  const limits: Record<RequestKind, number> = { read: budget.reads, write: budget.writes };
  const member = randomUUID();
  let seq = 0;

  return {
    async acquire(kind, { signal }) {
      let waited = 0;
      for (;;) {
        if (signal.aborted) throw abortError(signal);
        const ms = Number(
          await redis.understudyGateAcquire(
            `${base}:${kind}`,
            pauseKey,
            epochKey,
            limits[kind],
            budget.windowMs + marginMs,
            `${member}:${seq++}`,
            seen,
          ),
        );
        seen = 1;
        if (ms <= 0) return waited;
        await wait(ms, signal);
        waited += ms;
      }
    },
    async pause(ms) {
      if (ms > 0) await redis.understudyGatePause(pauseKey, Math.ceil(ms));
    },
    async close() {},
  };
}
