import { isCronExpression } from '../config/schedule-checks.js';
import { UsageError } from '../errors.js';
import { type ScheduleClock, type Ticker, wallClock } from './schedule-clock.js';

/** When a schedule comes due: on a cron expression (in a time zone), or every so many ms (the first at once?). */
export type Timing =
  | { readonly cron: string; readonly timezone?: string }
  | { readonly everyMs: number; readonly firstNow?: boolean };

/** One schedule: what to run (`job`), when, and its `key` (a job due while the same key waits or runs is skipped). */
export interface Schedule<J> {
  readonly key: string;
  readonly job: J;
  readonly timing: Timing;
}

/** A job and the time (ms since the epoch) it comes due next. */
export interface Upcoming<J> {
  readonly job: J;
  readonly at: number;
}

export interface RunSchedulesOptions<J> {
  /** Runs one job; never two at once. */
  readonly run: (job: J, signal: AbortSignal) => Promise<void>;
  /** Where time comes from (default: the wall clock). */
  readonly clock?: ScheduleClock;
  /** A run that failed: the schedules carry on. Without it, the failure ends them (and is thrown). */
  readonly onError?: (err: unknown, job: J) => void;
  /** A job that came due while the same key was waiting or running: skipped. */
  readonly onSkip?: (job: J, at: number) => void;
  /** Once at start: each schedule's next time (null: none), in the order given. */
  readonly onStart?: (upcoming: readonly (Upcoming<J> | null)[]) => void;
  /** Whenever the runner goes idle, and every 30 s while it is: the next job due (for a terminal). */
  readonly onIdle?: (next: Upcoming<J> | null) => void;
  /** A run starts. */
  readonly onRunStart?: (job: J) => void;
}

const IDLE_REFRESH_MS = 30_000;

/**
 * The jobs due, run one at a time in the order they came due. The one overlap rule of every schedule of the
 * process: a job that comes due while another runs waits its turn; one whose key is already waiting or running
 * is skipped (never queued twice, never stacked behind itself).
 */
class DueJobs<J> {
  private readonly waiting: Schedule<J>[] = [];
  private running: string | null = null;
  private wake: (() => void) | null = null;

  constructor(private readonly onSkip: ((job: J) => void) | undefined) {}

  due(s: Schedule<J>): void {
    if (this.running === s.key || this.waiting.some((w) => w.key === s.key)) {
      this.onSkip?.(s.job);
      return;
    }
    this.waiting.push(s);
    this.wake?.();
  }

  /** The next job to run (marked running), or null once nothing is due and `wait` resolved first. */
  take(): Schedule<J> | null {
    const s = this.waiting.shift() ?? null;
    this.running = s?.key ?? null;
    return s;
  }

  done(): void {
    this.running = null;
  }

  /** Resolves when a job comes due or `signal` aborts. */
  async idle(signal: AbortSignal): Promise<void> {
    await new Promise<void>((resolve) => {
      this.wake = resolve;
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
    this.wake = null;
  }
}

function startTicker<J>(clock: ScheduleClock, s: Schedule<J>, due: () => void): Promise<Ticker> | Ticker {
  if ('cron' in s.timing) return clock.cron(s.timing.cron, s.timing.timezone, due);
  if (s.timing.firstNow) due();
  return clock.every(s.timing.everyMs, due);
}

const upcomingOf = <J>(s: Schedule<J>, t: Ticker): Upcoming<J> | null => {
  const at = t.next();
  return at === null ? null : { job: s.job, at };
};

/** The job due soonest (from a second ago on: one firing right now still counts), or null. */
function soonest<J>(schedules: readonly Schedule<J>[], tickers: readonly Ticker[], now: number): Upcoming<J> | null {
  const all = schedules.map((s, i) => upcomingOf(s, tickers[i] as Ticker));
  const ahead = all.filter((u): u is Upcoming<J> => u !== null && u.at >= now - 1000);
  return ahead.sort((a, b) => a.at - b.at)[0] ?? null;
}

/**
 * Runs jobs on their schedules, in this process alone (no Redis), one at a time under the one overlap rule of
 * `DueJobs`. Resolves once `signal` aborts and the run in flight, which gets the same signal, has ended. Throws
 * `UsageError` for an invalid cron expression (before anything runs).
 */
export async function runSchedules<J>(
  schedules: readonly Schedule<J>[],
  signal: AbortSignal,
  opts: RunSchedulesOptions<J>,
): Promise<void> {
  for (const s of schedules)
    if ('cron' in s.timing && !isCronExpression(s.timing.cron))
      throw new UsageError(`--schedule: not a cron expression: "${s.timing.cron}"`);
  if (signal.aborted) return;
  const clock = opts.clock ?? wallClock;
  const jobs = new DueJobs<J>(opts.onSkip && ((job) => opts.onSkip?.(job, clock.now())));
  const tickers: Ticker[] = [];
  let idleTicker: Ticker | null = null;
  try {
    for (const s of schedules) tickers.push(await startTicker(clock, s, () => jobs.due(s)));
    opts.onStart?.(schedules.map((s, i) => upcomingOf(s, tickers[i] as Ticker)));
    const idle = opts.onIdle;
    const showIdle = idle && (() => idle(soonest(schedules, tickers, clock.now())));
    while (!signal.aborted) {
      const s = jobs.take();
      if (s) {
        await runOne(s.job, signal, opts);
        jobs.done();
        continue;
      }
      showIdle?.();
      idleTicker = showIdle ? clock.every(IDLE_REFRESH_MS, showIdle) : null;
      await jobs.idle(signal);
      await idleTicker?.stop();
      idleTicker = null;
    }
  } finally {
    await idleTicker?.stop();
    for (const t of tickers) await t.stop();
  }
}

async function runOne<J>(job: J, signal: AbortSignal, opts: RunSchedulesOptions<J>): Promise<void> {
  opts.onRunStart?.(job);
  try {
    await opts.run(job, signal);
  } catch (err) {
    if (!opts.onError) throw err;
    opts.onError(err, job);
  }
}
