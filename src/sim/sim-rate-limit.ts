/** Per-key rolling-window limits: a log of accepted request times, reads and writes apart. */
export interface RateLimits {
  readLimit: number;
  writeLimit: number;
  windowMs: number;
}

export interface RateDecision {
  readonly allowed: boolean;
  /** Headers to send (RateLimit-*, and Retry-After when refused); empty when the kind is unlimited. */
  readonly headers: Record<string, string>;
}

const unlimited = (n: number): boolean => n === 0 || !Number.isFinite(n);

export class RollingLimiter {
  private readonly log = new Map<string, number[]>();
  constructor(
    public limits: RateLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records the request if it fits the window; a refused request is not logged (it does not extend the wait). */
  take(key: string, kind: 'read' | 'write'): RateDecision {
    const limit = kind === 'read' ? this.limits.readLimit : this.limits.writeLimit;
    if (unlimited(limit)) return { allowed: true, headers: {} };
    const now = this.now();
    const id = `${kind}:${key}`;
    const from = now - this.limits.windowMs;
    const times = (this.log.get(id) ?? []).filter((t) => t > from);
    this.log.set(id, times);
    const resetMs = (oldest: number | undefined): number =>
      oldest === undefined ? 0 : oldest + this.limits.windowMs - now;
    if (times.length >= limit) {
      const wait = Math.max(1, Math.ceil(resetMs(times[times.length - limit]) / 1000));
      return {
        allowed: false,
        headers: {
          'retry-after': String(wait),
          'ratelimit-limit': String(limit),
          'ratelimit-remaining': '0',
          'ratelimit-reset': String(wait),
        },
      };
    }
    times.push(now);
    return {
      allowed: true,
      headers: {
        'ratelimit-limit': String(limit),
        'ratelimit-remaining': String(limit - times.length),
        'ratelimit-reset': String(Math.max(1, Math.ceil(resetMs(times[0]) / 1000))),
      },
    };
  }

  reset(): void {
    this.log.clear();
  }
}
