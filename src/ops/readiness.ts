import type { MirrorHealth } from '../store/mirror-health.js';

/** One readiness check's verdict; `detail` says why it failed (never a secret). */
export interface CheckResult {
  readonly ok: boolean;
  readonly ms: number;
  readonly detail?: string;
}

export interface Readiness {
  readonly ok: boolean;
  readonly checks: Record<string, CheckResult>;
}

/** A named check: resolves when healthy, throws (with a short reason) when not. */
export type ReadinessCheck = (signal: AbortSignal) => Promise<void>;

/** What the Redis check needs from an ioredis connection. */
export interface PingableRedis {
  readonly status: string;
  ping(): Promise<string>;
}

const DEFAULT_TIMEOUT_MS = 1500;

/**
 * Runs every check at once, each bounded by `timeoutMs`, so a dead dependency answers "not ready" within about
 * that time rather than hanging the probe.
 */
export async function runChecks(
  checks: Record<string, ReadinessCheck>,
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<Readiness> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]): Promise<[string, CheckResult]> => {
      const started = performance.now();
      const ac = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          ac.abort();
          reject(new Error(`no answer within ${timeoutMs} ms`));
        }, timeoutMs);
      });
      try {
        await Promise.race([check(ac.signal), timeout]);
        return [name, { ok: true, ms: Math.round(performance.now() - started) }];
      } catch (err) {
        const detail = err instanceof Error ? err.message : String(err);
        return [name, { ok: false, ms: Math.round(performance.now() - started), detail }];
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  const results = Object.fromEntries(entries);
  return { ok: entries.every(([, r]) => r.ok), checks: results };
}

/**
 * Redis answers PING. A connection that is not `ready` (reconnecting after an outage) fails at once, without
 * queueing a command that would wait for the reconnect.
 */
export const redisCheck =
  (redis: PingableRedis): ReadinessCheck =>
  async () => {
    if (redis.status !== 'ready') throw new Error(`connection ${redis.status}`);
    const reply = await redis.ping();
    if (reply !== 'PONG') throw new Error(`PING answered ${reply}`);
  };

/**
 * The mirror answers and every migration in `expected` has been applied. The worker passes health over its own
 * connection (which still notices a file removed or replaced under it); tools pass `fileMirrorHealth(path)`.
 */
export const databaseCheck =
  (health: Pick<MirrorHealth, 'appliedMigrations'>, expected: readonly string[]): ReadinessCheck =>
  async () => {
    try {
      const applied = new Set(await health.appliedMigrations());
      if (applied.size === 0) throw new Error('no migrations applied');
      const missing = expected.filter((m) => !applied.has(m));
      if (missing.length > 0) throw new Error(`migrations not applied: ${missing.join(', ')}`);
    } catch (err) {
      const code = (err as { code?: string }).code;
      throw new Error(code ? `${code}: ${(err as Error).message}` : (err as Error).message, { cause: err });
    }
  };
