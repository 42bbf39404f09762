import cron from 'node-cron';
import type { Config } from '../config/config-schema.js';
import { isCronExpression } from '../config/schedule-checks.js';
import { UsageError } from '../errors.js';

export interface InlineScheduleOptions {
  /** IANA time zone the expression is read in (default: the process's). */
  readonly timezone?: string;
  /** Called when a tick fails; the schedule carries on. */
  readonly onError?: (err: unknown) => void;
  /** Called when a tick comes while the previous run is still going (that tick is skipped). */
  readonly onSkip?: (at: Date) => void;
}

/**
 * Runs `tick` on every tick of a cron expression, in this process alone (no Redis), never overlapping itself:
 * a tick that comes while a run is going is skipped. Resolves once `signal` aborts and the run in flight,
 * which receives the same signal, has ended. Throws `UsageError` for an invalid expression.
 */
export async function runOnSchedule(
  expression: string,
  tick: (signal: AbortSignal) => Promise<void>,
  signal: AbortSignal,
  opts: InlineScheduleOptions = {},
): Promise<void> {
  if (!isCronExpression(expression)) throw new UsageError(`--schedule: not a cron expression: "${expression}"`);
  if (signal.aborted) return;
  let running: Promise<void> | null = null;
  const task = cron.createTask(
    expression,
    () => {
      if (running) {
        opts.onSkip?.(new Date());
        return;
      }
      running = tick(signal)
        .catch((err: unknown) => opts.onError?.(err))
        .finally(() => {
          running = null;
        });
    },
    { ...(opts.timezone ? { timezone: opts.timezone } : {}) },
  );
  try {
    await task.start();
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  } finally {
    await task.stop();
    await task.destroy();
    await running;
  }
}

/**
 * The chosen tenants (all when `only` is empty) grouped by the time zone their schedule is read in: the tenant's
 * `schedule.timezone` (UTC when it has a `schedule` without one, as for the worker), else `undefined`, the
 * process's own zone.
 */
export function tenantsByTimezone(
  config: Pick<Config, 'tenants'>,
  only: readonly string[] = [],
): Map<string | undefined, string[]> {
  const groups = new Map<string | undefined, string[]>();
  for (const t of config.tenants) {
    if (only.length > 0 && !only.includes(t.slug)) continue;
    const zone = t.schedule?.timezone;
    groups.set(zone, [...(groups.get(zone) ?? []), t.slug]);
  }
  return groups;
}
