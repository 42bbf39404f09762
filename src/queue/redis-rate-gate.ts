import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { UnderstudyError } from '../errors.js';
import type { RateBudget, RateGate, RequestKind } from '../partners/rate-gate.js';
import { isRedisConnectionError } from './redis-settings.js';

/**
 * Admits one request or says how long to wait, atomically, on Redis' own clock (TIME), so processes on
 * different machines agree. KEYS: [window zset, pause key, epoch key]. ARGV: [limit, window ms, member, lease ms,
 * seen]. Each member's score is the moment it was sent, or for one still in flight its grant plus the lease (settle
 * rewrites it); it counts until its score is a window old.
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
  if ARGV[5] == '1' and redis.call('PTTL', KEYS[2]) < tonumber(ARGV[2]) then
    redis.call('SET', KEYS[2], 'lost', 'PX', ARGV[2])
  end
end
local paused = redis.call('PTTL', KEYS[2])
if paused > 0 then return paused end
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local lease = tonumber(ARGV[4])
if redis.call('ZCARD', KEYS[1]) < limit then
  redis.call('ZADD', KEYS[1], now + lease, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window + lease)
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local wait = tonumber(oldest[2]) + window - now + 1
if wait < 1 then wait = 1 end
return wait
`;

/**
 * Marks a member as sent now, on Redis' clock: after the upstream counted it, since its answer has arrived.
 * KEYS: [window zset]. ARGV: [member, window ms, lease ms].
 */
const SETTLE_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) + tonumber(ARGV[3]))
return 0
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
    leaseMs: number,
    seen: 0 | 1,
  ): Promise<number>;
  understudyGateSettle(win: string, member: string, windowMs: number, leaseMs: number): Promise<number>;
  understudyGatePause(pause: string, ms: number): Promise<number>;
};

const withCommands = (redis: Redis): GateRedis => {
  const r = redis as GateRedis;
  // defineCommand loads the script once per connection and calls it by EVALSHA from then on.
  if (typeof r.understudyGateSettle !== 'function') {
    redis.defineCommand('understudyGateAcquire', { numberOfKeys: 3, lua: ACQUIRE_LUA });
    redis.defineCommand('understudyGatePause', { numberOfKeys: 1, lua: PAUSE_LUA });
    redis.defineCommand('understudyGateSettle', { numberOfKeys: 1, lua: SETTLE_LUA });
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
   * Extra milliseconds each request stays counted beyond the window. Settling at the answer already keeps a
   * request counted until after the upstream counted it, whatever the delay before it left; the margin only
   * covers clock differences between the Redis host and the upstream. Default 10.
   */
  readonly marginMs?: number;
  /** Called when a settle could not reach Redis (the request then stays counted until its lease ends). */
  readonly onSettleError?: (err: unknown) => void;
  /**
   * Aborts when the process stops: a wait whose connection then ends (Redis unreachable at stop,
   * src/queue/redis-at-stop.ts) ends as aborted (`US_ABORTED`), the stop it is, not as a failure.
   */
  readonly stopping?: AbortSignal;
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
 * Redis' answer, or `US_ABORTED` as soon as `signal` aborts: through an outage a command waits for Redis to come
 * back, and a stopping process must not wait with it. A slot granted after that is settled by its lease.
 */
const answerOrAbort = <T>(answer: Promise<T>, signal: AbortSignal): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    // A late answer or failure settles a promise already rejected: nothing is left unhandled.
    void answer.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });

/** Default extra milliseconds a request stays counted beyond the window (clock differences between hosts). */
export const DEFAULT_GATE_MARGIN_MS = 10;

/** One gate's keys, limits and the members it was granted and has not settled yet. */
interface GateState {
  readonly redis: GateRedis;
  /** `{prefix}:rate:{keyHash}`; the window of a kind is `{base}:{kind}`. */
  readonly base: string;
  readonly pauseKey: string;
  readonly epochKey: string;
  readonly limits: Record<RequestKind, number>;
  /** The window plus the margin: how long a settled request stays counted. */
  readonly windowMs: number;
  readonly leaseMs: number;
  /** This gate's member prefix; each request gets `{member}:{seq}`. */
  readonly member: string;
  seq: number;
  /** Whether this gate has run the script (so the epoch key existed after it): its absence then means data loss. */
  seen: 0 | 1;
  /** Members granted to this process and not yet settled, oldest first, per kind. */
  readonly inFlight: Record<RequestKind, string[]>;
  /** Sends a command for an acquire: its connection ending at stop is the stop (`RedisRateGateOptions.stopping`). */
  readonly ask: <T>(command: () => Promise<T>) => Promise<T>;
}

/** Runs Redis commands for waits that end with the process: a connection error once `stopping` aborted is a stop. */
const askUntil =
  (stopping: AbortSignal | undefined) =>
  <T>(command: () => Promise<T>): Promise<T> =>
    command().catch((err: unknown) => {
      if (stopping?.aborted && isRedisConnectionError(err))
        throw new UnderstudyError('US_ABORTED', 'rate gate wait ended: stopping, with Redis unreachable', {
          cause: err,
        });
      throw err;
    });

/** Waits for a slot of `kind`, asking Redis until it admits the request; resolves with the milliseconds waited. */
async function acquireSlot(g: GateState, kind: RequestKind, signal: AbortSignal): Promise<number> {
  let waited = 0;
  for (;;) {
    if (signal.aborted) throw abortError(signal);
    const id = `${g.member}:${g.seq++}`;
    const { base, pauseKey, epochKey, windowMs, leaseMs } = g;
    const ms = Number(
      await answerOrAbort(
        g.ask(() =>
          g.redis.understudyGateAcquire(
            `${base}:${kind}`,
            pauseKey,
            epochKey,
            g.limits[kind],
            windowMs,
            id,
            leaseMs,
            g.seen,
          ),
        ),
        signal,
      ),
    );
    g.seen = 1;
    if (ms <= 0) {
      g.inFlight[kind].push(id);
      return waited;
    }
    await wait(ms, signal);
    waited += ms;
  }
}

/**
 * The rate gate backed by Redis: a rolling window per key hash and kind in a sorted set, shared by every
 * process that uses the key, plus a key-wide pause (a 429 seen anywhere holds that key's requests everywhere).
 * A granted request is scored at its grant plus a lease of one window until it is settled (a process that dies
 * mid-request leaks its slot for two windows at most), then at the settle time.
 */
export function createRedisRateGate(opts: RedisRateGateOptions): RateGate {
  const { budget, prefix, keyHash } = opts;
  if (!/^[A-Za-z0-9_-]+$/.test(keyHash)) throw new TypeError('keyHash must be a hash (letters, digits, _ and -)');
  const base = `${prefix}:rate:${keyHash}`;
  const g: GateState = {
    redis: withCommands(opts.redis),
    base,
    pauseKey: `${base}:pause`,
    epochKey: `${base}:epoch`,
    limits: { read: budget.reads, write: budget.writes },
    windowMs: budget.windowMs + (opts.marginMs ?? DEFAULT_GATE_MARGIN_MS),
    leaseMs: budget.windowMs,
    member: randomUUID(),
    seq: 0,
    seen: 0,
    inFlight: { read: [], write: [] },
    ask: askUntil(opts.stopping),
  };
  return {
    acquire: (kind, { signal }) => acquireSlot(g, kind, signal),
    settle(kind) {
      // Any of this process's in-flight members will do (see memory-rate-gate.ts); the oldest has the nearest lease.
      const id = g.inFlight[kind].shift();
      if (id === undefined) return;
      // Not awaited: the answer is already here, and commands on this connection run in order, so the next
      // acquire sees it. A lost settle only keeps the slot counted until the lease ends.
      g.redis.understudyGateSettle(`${base}:${kind}`, id, g.windowMs, g.leaseMs).catch((err: unknown) => {
        opts.onSettleError?.(err);
      });
    },
    release(kind) {
      const id = g.inFlight[kind].pop();
      if (id === undefined) return;
      // Not awaited, as a settle: a lost release only keeps the slot counted until its lease ends.
      g.redis.zrem(`${base}:${kind}`, id).catch((err: unknown) => {
        opts.onSettleError?.(err);
      });
    },
    async pause(ms) {
      if (ms > 0) await g.redis.understudyGatePause(g.pauseKey, Math.ceil(ms));
    },
    async close() {},
  };
}
