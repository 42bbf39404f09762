import type { Redis } from 'ioredis';
import { asUnderstudyError } from '../queue/redis-settings.js';

/** Where one token stands in its window: whether this request passes, and the `RateLimit-*` numbers. */
export interface RateDecision {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  /** Seconds until the window ends (and the budget is whole again). */
  readonly resetS: number;
}

const WINDOW_MS = 60_000;

/** INCR the window's counter, expiring with the window: one round trip, atomic across every serve process. */
const COUNT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {n, redis.call('PTTL', KEYS[1])}
`;

/**
 * The per-token request budget of `serve` (config `api.rateLimit`, requests a minute): a fixed one-minute window
 * counted in Redis by the token's name (never its value), so every serve process behind a load balancer shares it.
 * Rejects with `US_REDIS` when Redis does not answer.
 */
export function tokenRateLimit(redis: Redis, prefix: string, perMinute: () => number) {
  return async (tokenName: string, now = Date.now()): Promise<RateDecision> => {
    const window = Math.floor(now / WINDOW_MS);
    const key = `${prefix}:serve:rate:${tokenName}:${window}`;
    const [n, ttl] = (await redis.eval(COUNT, 1, key, String(WINDOW_MS)).catch((err: unknown) => {
      throw asUnderstudyError(err); // US_REDIS: 503 with Retry-After
    })) as [number, number];
    const limit = perMinute();
    const resetMs = ttl > 0 ? ttl : WINDOW_MS - (now % WINDOW_MS);
    return {
      allowed: n <= limit,
      limit,
      remaining: Math.max(0, limit - n),
      resetS: Math.max(1, Math.ceil(resetMs / 1000)),
    };
  };
}

/** The `RateLimit-*` headers of a decision (draft-ietf-httpapi-ratelimit-headers), plus `Retry-After` on a refusal. */
export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  return {
    'ratelimit-limit': String(d.limit),
    'ratelimit-remaining': String(d.remaining),
    'ratelimit-reset': String(d.resetS),
    'ratelimit-policy': `${d.limit};w=60`,
    ...(d.allowed ? {} : { 'retry-after': String(d.resetS) }),
  };
}
