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
/** A process reserves at most this share of what is left of a window at once (1/64: 9 of a fresh 600)… */
const LEASE_SHARE = 64;
/** …and never more than this many requests. */
const MAX_LEASE = 256;

/** INCRBY the window's counter by a lease, expiring with the window: one round trip, atomic across every process. */
const RESERVE = `
local n = redis.call('INCRBY', KEYS[1], ARGV[2])
if n == tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n
`;

/** What this process holds of a token's window: requests reserved in Redis and not yet spent. */
interface Lease {
  readonly window: number;
  left: number;
  /** The window's count in Redis after this process's last reservation (every process's requests and leases). */
  readonly counted: number;
  /** Nothing more can be reserved this window. */
  readonly spent: boolean;
}

/**
 * The per-token request budget of `serve` (config `api.rateLimit`, requests a minute): a fixed one-minute window
 * counted in Redis by the token's name (never its value), so every serve process behind a load balancer shares it.
 * A process reserves requests in small leases (a 64th of what is left, 1 near the limit), so most requests pass
 * without a round trip while the processes together never pass more than the limit; a lease a process has not spent
 * when the window ends is lost to the others (docs/api.md). Rejects with `US_REDIS` when Redis does not answer.
 */
export function tokenRateLimit(redis: Redis, prefix: string, perMinute: () => number) {
  const leases = new Map<string, Lease>();
  const reserving = new Map<string, Promise<void>>();

  const reserve = async (tokenName: string, window: number): Promise<void> => {
    const limit = perMinute();
    const held = leases.get(tokenName);
    const seen = held?.window === window ? held.counted : 0;
    const ask = Math.min(MAX_LEASE, Math.max(1, Math.floor((limit - seen) / LEASE_SHARE)));
    const key = `${prefix}:serve:rate:${tokenName}:${window}`;
    // A Redis error is US_REDIS (503 with Retry-After), not a bare ioredis error (which would answer 500).
    const n = Number(
      await redis.eval(RESERVE, 1, key, String(WINDOW_MS), String(ask)).catch((err: unknown) => {
        throw asUnderstudyError(err);
      }),
    );
    const granted = Math.max(0, Math.min(ask, limit - (n - ask)));
    leases.set(tokenName, { window, left: granted, counted: n, spent: granted < ask });
  };

  /** One reservation at a time per token: requests arriving meanwhile wait for it. */
  const reserveOnce = (tokenName: string, window: number): Promise<void> => {
    const pending = reserving.get(tokenName);
    if (pending) return pending;
    const p = reserve(tokenName, window).finally(() => reserving.delete(tokenName));
    reserving.set(tokenName, p);
    return p;
  };

  return async (tokenName: string, now = Date.now()): Promise<RateDecision> => {
    const window = Math.floor(now / WINDOW_MS);
    for (;;) {
      const lease = leases.get(tokenName);
      if (lease?.window === window && (lease.left > 0 || lease.spent)) {
        const allowed = lease.left > 0;
        if (allowed) lease.left--;
        const limit = perMinute();
        return {
          allowed,
          limit,
          remaining: allowed ? Math.max(0, limit - (lease.counted - lease.left)) : 0,
          resetS: Math.max(1, Math.ceil((WINDOW_MS - (now % WINDOW_MS)) / 1000)),
        };
      }
      await reserveOnce(tokenName, window);
    }
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
