import { type Job, Worker, type WorkerOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { closeAll, closeOnce } from '../close-all.js';
import type { Config } from '../config/config-schema.js';
import type { Logger } from '../log.js';
import type { ScheduleClock } from '../sync/schedule-clock.js';
import { closeWorker, jobsInFlight, redisGoneWhenClosing } from './close-worker.js';
import { warnUnlessRedisDown } from './error-listeners.js';
import { type PeriodicTask, startPeriodic } from './periodic-tasks.js';

/** A job's lock and the look for jobs whose worker died (config `worker.lockDurationMs`, `stalledIntervalMs`). */
export interface WorkerLock {
  /** BullMQ's job lock: a job whose worker died is taken up again once it expires. */
  readonly lockDurationMs: number;
  /** How often stalled jobs are looked for; default min(30000, the lock). */
  readonly stalledIntervalMs?: number | undefined;
  /** Times a job may stall before BullMQ fails it. */
  readonly maxStalledCount: number;
}

/** The lock config `worker` sets (`lockDurationMs` defaults in the schema), with `maxStalledCount`. */
export const configuredLock = (worker: Config['worker'], maxStalledCount: number): WorkerLock => ({
  lockDurationMs: worker.lockDurationMs,
  stalledIntervalMs: worker.stalledIntervalMs,
  maxStalledCount,
});

/** The two moments of a worker's close its processor hears of. */
export interface WorkerStops {
  /** Aborts when `close()` begins: a job in flight ends at its next safe point (it is handed back). */
  readonly closing: AbortSignal;
  /** Aborts `graceMs` later: what still runs is cut (its job runs again later). */
  readonly hardStop: AbortSignal;
}

export type QueueProcessor<D> = (job: Job<D>, token?: string, signal?: AbortSignal) => Promise<unknown>;

export interface QueueWorkerOptions<D> {
  /** The queue's name. */
  readonly queue: string;
  /** The processor, made once the worker's stop signals exist. */
  readonly processor: (stops: WorkerStops) => QueueProcessor<D>;
  /** How long `close()` lets jobs in flight finish before `hardStop` aborts; the close is bounded a second later. */
  readonly graceMs: number;
  /** Work repeated on `clock` while the worker runs; stopped (runs in flight awaited) first at close. */
  readonly periodic?: readonly PeriodicTask[];
  readonly clock: Pick<ScheduleClock, 'every'>;
  /** The app's long-lived connection (BullMQ duplicates it for blocking reads). */
  readonly redis: Redis;
  readonly prefix: string;
  readonly log: Logger;
  /** Aborts when the process stops: then (or once closing) a connection not ready means Redis is gone. */
  readonly processStopping: AbortSignal;
  readonly concurrency: number;
  /** The job lock and stall settings; absent: BullMQ's own. */
  readonly lock?: WorkerLock;
  /** The wait before retry n of a job with backoff type `custom`. */
  readonly backoff?: (attemptsMade: number) => number;
  /** What the worker's `error` lines say (a lost connection is left to the connection's own lines). */
  readonly errorWhat: string;
  /** Why `hardStop` aborted (default an `AbortError`). */
  readonly hardStopReason?: unknown;
}

export interface QueueWorker<D> extends WorkerStops {
  readonly worker: Worker<D>;
  /** Stops the periodic work, then closes the worker within its grace (then a hard stop). Idempotent. */
  close(): Promise<void>;
}

/** Stalled jobs are looked for at least this often (and at most as often as the lock runs out). */
const MAX_STALLED_INTERVAL_MS = 30_000;

const lockOptions = (lock: WorkerLock | undefined): Partial<WorkerOptions> =>
  lock
    ? {
        lockDuration: lock.lockDurationMs,
        stalledInterval: lock.stalledIntervalMs ?? Math.min(MAX_STALLED_INTERVAL_MS, lock.lockDurationMs),
        maxStalledCount: lock.maxStalledCount,
      }
    : {};

/**
 * One BullMQ worker's life: its options, its `error` lines, its periodic work on the injected clock, and one close
 * (memoized) that stops the periodic work, tells the processor (`closing`), lets the jobs in flight finish for
 * `graceMs`, then cuts them (`hardStop`); with Redis gone it waits for its own jobs, not for Redis (closeWorker).
 */
export function startQueueWorker<D>(opts: QueueWorkerOptions<D>): QueueWorker<D> {
  const closing = new AbortController();
  const hardStop = new AbortController();
  const redisGone = redisGoneWhenClosing(opts.processStopping, closing.signal, opts.redis);
  const jobs = jobsInFlight(redisGone);
  const processor = jobs.track(opts.processor({ closing: closing.signal, hardStop: hardStop.signal }));
  const worker = new Worker<D>(opts.queue, processor, {
    connection: opts.redis,
    prefix: opts.prefix,
    concurrency: opts.concurrency,
    autorun: true,
    ...lockOptions(opts.lock),
    ...(opts.backoff ? { settings: { backoffStrategy: opts.backoff } } : {}),
  });
  worker.on('error', warnUnlessRedisDown(opts.log, opts.errorWhat));
  const periodic = startPeriodic(opts.clock, opts.periodic ?? []);
  const close = closeOnce(async () => {
    closing.abort();
    const grace = setTimeout(() => hardStop.abort(opts.hardStopReason), opts.graceMs);
    grace.unref();
    try {
      // Not a bare worker.close(): closing mid-handshake would leave BullMQ an unhandled rejection, and with
      // Redis gone it would wait for it for ever (closeWorker).
      await closeAll(
        [() => periodic.stop(), () => closeWorker(worker, { jobs, redisGone, boundMs: opts.graceMs + 1000 })],
        `the ${opts.queue} worker`,
      );
    } finally {
      clearTimeout(grace);
    }
  });
  return { worker, closing: closing.signal, hardStop: hardStop.signal, close };
}
