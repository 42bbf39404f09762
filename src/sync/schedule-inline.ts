import cron from 'node-cron';
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
  if (!cron.validate(expression)) throw new UsageError(`--schedule: not a cron expression: "${expression}"`);
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
