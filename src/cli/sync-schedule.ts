import type { Config } from '../config/config-schema.js';
import { UsageError } from '../errors.js';
import type { Schedule, Upcoming } from '../sync/run-schedules.js';
import { tenantsByTimezone } from '../sync/schedule-inline.js';
import type { SyncMode } from '../sync/sync-collection.js';
import { inWords } from './parse-duration.js';

/** One scheduled sync: tenants, a mode, and the zone its schedule is read in (for what a terminal shows). */
export interface ScheduledRun {
  readonly tenants: readonly string[];
  readonly mode: SyncMode;
  readonly zone: string;
}

const clock = (at: number, zone: string, now: number): string => {
  const time = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit' }).format(at);
  const day = (t: number) => new Intl.DateTimeFormat('en-GB', { timeZone: zone, dateStyle: 'medium' }).format(t);
  return day(at) === day(now)
    ? time
    : `${new Intl.DateTimeFormat('en-GB', { timeZone: zone, weekday: 'short' }).format(at)} ${time}`;
};

/** `next: full at 03:00 Europe/London, in 6 h 09 min (harbour-opera)`. */
export const describeNext = (u: Upcoming<ScheduledRun>, now: number): string =>
  `next: ${u.job.mode} at ${clock(u.at, u.job.zone, now)} ${u.job.zone}, ${inWords(u.at - now)} (${u.job.tenants.join(', ')})`;

const scheduledTenants = (config: Pick<Config, 'tenants'>, only: readonly string[]) =>
  config.tenants.filter((t) => (only.length === 0 || only.includes(t.slug)) && t.schedule);

/**
 * `sync --schedule` without a CRON: the config's own schedules, as the worker reads them: per chosen tenant with a
 * `schedule`, an incremental sync every `incrementalEveryMinutes` (the first at once, as the worker's schedulers
 * do) and a full one on `fullCron` in the tenant's `timezone`. None: a `UsageError` (exit 2).
 */
export function configSchedules(config: Pick<Config, 'tenants'>, only: readonly string[]): Schedule<ScheduledRun>[] {
  const chosen = scheduledTenants(config, only);
  if (chosen.length === 0)
    throw new UsageError(
      '--schedule without a CRON runs the config\'s schedules, and no tenant chosen has one: add "schedule" ' +
        'to a tenant (incrementalEveryMinutes, fullCron, timezone) or give --schedule CRON',
    );
  return chosen.flatMap(({ slug, schedule: s }): Schedule<ScheduledRun>[] => {
    if (!s) return [];
    const job = (mode: SyncMode): ScheduledRun => ({ tenants: [slug], mode, zone: s.timezone });
    return [
      ...(s.incrementalEveryMinutes > 0
        ? [
            {
              key: `incremental ${slug}`,
              job: job('incremental'),
              timing: { everyMs: s.incrementalEveryMinutes * 60_000, firstNow: true },
            },
          ]
        : []),
      ...(s.fullCron
        ? [{ key: `full ${slug}`, job: job('full'), timing: { cron: s.fullCron, timezone: s.timezone } }]
        : []),
    ];
  });
}

/** What is scheduled, one line per tenant, each with its next full run: what a terminal shows at start. */
export function scheduleLines(
  config: Pick<Config, 'tenants'>,
  only: readonly string[],
  upcoming: readonly (Upcoming<ScheduledRun> | null)[],
  now: number,
): string[] {
  return scheduledTenants(config, only).map(({ slug, schedule: s }) => {
    const full = upcoming.find((u) => u?.job.mode === 'full' && u.job.tenants[0] === slug);
    return [
      `schedule: ${slug}`,
      s && s.incrementalEveryMinutes > 0 ? `incremental every ${s.incrementalEveryMinutes} min (the first now)` : '',
      s?.fullCron ? `full on "${s.fullCron}" in ${s.timezone}` : '',
      full ? describeNext(full, now) : '',
    ]
      .filter(Boolean)
      .join(', ');
  });
}

/**
 * `sync --schedule CRON`: a sync of every chosen tenant on each tick, read in each tenant's `schedule.timezone`
 * (UTC when it has a `schedule` without one, the process's zone when it has none): one schedule per zone.
 */
export function cronSchedules(
  expression: string,
  config: Pick<Config, 'tenants'>,
  only: readonly string[],
  mode: SyncMode,
): Schedule<ScheduledRun>[] {
  return [...tenantsByTimezone(config, only)].map(([timezone, tenants]) => ({
    key: timezone ?? 'local',
    job: { tenants, mode, zone: timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone },
    timing: { cron: expression, ...(timezone ? { timezone } : {}) },
  }));
}
