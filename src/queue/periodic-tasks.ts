import type { ScheduleClock, Ticker } from '../sync/schedule-clock.js';

/** Work a long-lived worker repeats on its clock (a sweep, a poll, a prune); it logs its own failures. */
export interface PeriodicTask {
  /** How often it runs. */
  readonly everyMs: number;
  /** One run; a run still going when the next tick comes is not started twice (ticks are skipped). */
  readonly run: () => Promise<unknown>;
  /** Run once at start too (not awaited: Redis may be down). Default false. */
  readonly atStart?: boolean;
  /** The first run this long after start, then every `everyMs` (default: the first after `everyMs`). */
  readonly firstAfterMs?: number;
}

/** Periodic tasks running on a clock; `stop()` stops their ticks and waits for the runs in flight. */
export interface PeriodicTasks {
  stop(): Promise<void>;
}

/** Starts each task on `clock` (`wallClock` in a process, a clock a test advances in a test). */
export function startPeriodic(clock: Pick<ScheduleClock, 'every'>, tasks: readonly PeriodicTask[]): PeriodicTasks {
  const tickers = new Set<Ticker>();
  const running = new Set<Promise<unknown>>();
  let stopped = false;
  const runOnce = (task: PeriodicTask, last: { run: Promise<unknown> | null }) => {
    if (stopped || last.run) return;
    const run = task.run().catch(() => undefined); // failures are the task's to log
    last.run = run;
    running.add(run);
    void run.finally(() => {
      running.delete(run);
      last.run = null;
    });
  };
  for (const task of tasks) {
    const last: { run: Promise<unknown> | null } = { run: null };
    if (task.atStart) runOnce(task, last);
    const regular = () => clock.every(task.everyMs, () => runOnce(task, last));
    if (task.firstAfterMs === undefined) {
      tickers.add(regular());
      continue;
    }
    const first = clock.every(task.firstAfterMs, () => {
      tickers.delete(first);
      void first.stop();
      runOnce(task, last);
      if (!stopped) tickers.add(regular());
    });
    tickers.add(first);
  }
  return {
    async stop() {
      stopped = true;
      await Promise.all([...tickers].map((t) => t.stop()));
      tickers.clear();
      await Promise.all([...running]);
    },
  };
}
