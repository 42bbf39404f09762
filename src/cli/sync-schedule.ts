import cron from 'node-cron';
import type { Config } from '../config/config-schema.js';
import { UsageError } from '../errors.js';
import type { SyncMode } from '../sync/sync-collection.js';
import { inWords } from './parse-duration.js';

/** One scheduled sync: a tenant and a mode. */
export interface ScheduledRun {
  readonly tenant: string;
  readonly mode: SyncMode;
}

export interface ConfigScheduleOptions {
  /** Runs one sync; never two at once (the runner waits for each). */
  readonly run: (r: ScheduledRun, signal: AbortSignal) => Promise<void>;
  /** Told what comes next whenever the runner goes idle (and every 30 s while it is), for a terminal. */
  readonly onIdle?: (next: string | null) => void;
  /** Told once at start what is scheduled, one line per tenant, each with its next full run (for a terminal). */
  readonly onStart?: (lines: readonly string[]) => void;
  /** Told when a run starts (a terminal clears its "next" line). */
  readonly onRunStart?: (r: ScheduledRun) => void;
  readonly now?: () => number;
}

interface Timer {
  readonly tenant: string;
  readonly mode: SyncMode;
  readonly zone: string;
  next(): number | null;
}

const clock = (at: number, zone: string, now: number): string => {
  const time = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit' }).format(at);
  const day = (t: number) => new Intl.DateTimeFormat('en-GB', { timeZone: zone, dateStyle: 'medium' }).format(t);
  return day(at) === day(now)
    ? time
    : `${new Intl.DateTimeFormat('en-GB', { timeZone: zone, weekday: 'short' }).format(at)} ${time}`;
};

/** `next: full at 03:00 Europe/London, in 6 h 09 min (harbour-opera)`. */
export const describeNext = (t: { mode: SyncMode; tenant: string; zone: string; at: number }, now: number): string =>
  `next: ${t.mode} at ${clock(t.at, t.zone, now)} ${t.zone}, ${inWords(t.at - now)} (${t.tenant})`;

/**
 * `sync --schedule` without a CRON: the config's own schedules, in this process (no Redis), as the worker reads
 * them: per tenant with a `schedule`, an incremental sync every `incrementalEveryMinutes` (the first at once, as
 * the worker's schedulers do) and a full one on `fullCron` in the tenant's `timezone`. Runs never overlap: one
 * that comes due while another runs waits its turn (once: a due run already waiting is not queued twice).
 * Resolves once `signal` aborts and the run in flight, which gets the same signal, has ended.
 */
export async function runConfigSchedules(
  config: Pick<Config, 'tenants'>,
  only: readonly string[],
  signal: AbortSignal,
  opts: ConfigScheduleOptions,
): Promise<void> {
  const now = opts.now ?? Date.now;
  const chosen = config.tenants.filter((t) => (only.length === 0 || only.includes(t.slug)) && t.schedule);
  if (chosen.length === 0)
    throw new UsageError(
      '--schedule without a CRON runs the config\'s schedules, and no tenant chosen has one: add "schedule" ' +
        'to a tenant (incrementalEveryMinutes, fullCron, timezone) or give --schedule CRON',
    );
  const queue: ScheduledRun[] = [];
  let wake: (() => void) | null = null;
  const due = (r: ScheduledRun) => {
    if (queue.some((q) => q.tenant === r.tenant && q.mode === r.mode)) return;
    queue.push(r);
    wake?.();
  };
  const timers: Timer[] = [];
  const stops: (() => Promise<void> | void)[] = [];
  for (const t of chosen) {
    const s = t.schedule;
    if (!s) continue;
    if (s.incrementalEveryMinutes > 0) {
      const every = s.incrementalEveryMinutes * 60_000;
      // The first at once, the next every N minutes from then.
      due({ tenant: t.slug, mode: 'incremental' });
      let nextAt = now() + every;
      let handle: NodeJS.Timeout | null = null;
      const arm = () => {
        handle = setTimeout(
          () => {
            nextAt += every;
            due({ tenant: t.slug, mode: 'incremental' });
            arm();
          },
          Math.max(0, nextAt - now()),
        );
      };
      arm();
      stops.push(() => {
        if (handle) clearTimeout(handle);
      });
      timers.push({ tenant: t.slug, mode: 'incremental', zone: s.timezone, next: () => nextAt });
    }
    if (s.fullCron) {
      const task = cron.createTask(s.fullCron, () => due({ tenant: t.slug, mode: 'full' }), { timezone: s.timezone });
      await task.start();
      stops.push(async () => {
        await task.stop();
        await task.destroy();
      });
      timers.push({
        tenant: t.slug,
        mode: 'full',
        zone: s.timezone,
        next: () => task.getNextRun()?.getTime() ?? null,
      });
    }
  }
  if (opts.onStart) {
    const t = now();
    opts.onStart(
      chosen.map((c) => {
        const s = c.schedule;
        const full = timers.find((x) => x.tenant === c.slug && x.mode === 'full');
        const fullAt = full?.next() ?? null;
        return [
          `schedule: ${c.slug}`,
          s && s.incrementalEveryMinutes > 0
            ? `incremental every ${s.incrementalEveryMinutes} min (the first now)`
            : '',
          s?.fullCron ? `full on "${s.fullCron}" in ${s.timezone}` : '',
          full && fullAt !== null ? describeNext({ ...full, at: fullAt }, t) : '',
        ]
          .filter(Boolean)
          .join(', ');
      }),
    );
  }
  const nextText = (): string | null => {
    const t = now();
    const upcoming = timers
      .map((x) => ({ ...x, at: x.next() }))
      .filter((x): x is typeof x & { at: number } => x.at !== null && x.at >= t - 1000)
      .sort((a, b) => a.at - b.at)[0];
    return upcoming ? describeNext(upcoming, t) : null;
  };
  let idleTicker: NodeJS.Timeout | null = null;
  const idle = () => {
    if (!opts.onIdle) return;
    opts.onIdle(nextText());
    idleTicker = setInterval(() => opts.onIdle?.(nextText()), 30_000);
  };
  try {
    while (!signal.aborted) {
      const r = queue.shift();
      if (!r) {
        idle();
        await new Promise<void>((resolve) => {
          wake = resolve;
          signal.addEventListener('abort', () => resolve(), { once: true });
        });
        wake = null;
        if (idleTicker) clearInterval(idleTicker);
        continue;
      }
      opts.onRunStart?.(r);
      await opts.run(r, signal);
    }
  } finally {
    if (idleTicker) clearInterval(idleTicker);
    for (const stop of stops) await stop();
  }
}
