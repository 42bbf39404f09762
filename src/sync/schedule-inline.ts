import type { Config } from '../config/config-schema.js';
import { runSchedules } from './run-schedules.js';
import type { ScheduleClock } from './schedule-clock.js';

export interface InlineScheduleOptions {
  /** IANA time zone the expression is read in (default: the process's). */
  readonly timezone?: string;
  /** Called when a tick fails; the schedule carries on. */
  readonly onError?: (err: unknown) => void;
  /** Called when a tick comes while the previous run is still going (that tick is skipped). */
  readonly onSkip?: (at: Date) => void;
  /** Where time comes from (default: the wall clock). */
  readonly clock?: ScheduleClock;
}

/**
 * Runs `tick` on every tick of a cron expression, in this process alone (no Redis), never overlapping itself:
 * a tick that comes while a run is going is skipped (`runSchedules` with one schedule). Resolves once `signal`
 * aborts and the run in flight, which receives the same signal, has ended. Throws `UsageError` for an invalid
 * expression.
 */
export async function runOnSchedule(
  expression: string,
  tick: (signal: AbortSignal) => Promise<void>,
  signal: AbortSignal,
  opts: InlineScheduleOptions = {},
): Promise<void> {
  const timing = { cron: expression, ...(opts.timezone ? { timezone: opts.timezone } : {}) };
  const { onSkip, onError } = opts;
  await runSchedules([{ key: expression, job: expression, timing }], signal, {
    run: (_job, s) => tick(s),
    // Without onError a failing tick is still only reported (to nobody): the schedule carries on.
    onError: (err) => onError?.(err),
    ...(onSkip ? { onSkip: (_job: string, at: number) => onSkip(new Date(at)) } : {}),
    ...(opts.clock ? { clock: opts.clock } : {}),
  });
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
