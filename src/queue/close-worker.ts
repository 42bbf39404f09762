import type { Worker } from 'bullmq';

/** How long `closeWorker` lets a worker finish opening its connections; a Redis that is down uses it all. */
export const WORKER_READY_WAIT_MS = 2000;

/** How long `closeWorker` waits for a close by default: past it the worker is left to the process' exit. */
export const WORKER_CLOSE_BOUND_MS = 10_000;

/** Whether `p` settles within `ms` (its outcome is not the question). */
export function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
  });
  const settled = p.then(
    () => true,
    () => true,
  );
  return Promise.race([settled, late]).finally(() => clearTimeout(timer));
}

/**
 * Whether a worker's Redis is gone for its close: once the process stops (`stopping`) or the worker closes
 * (`closing`), its connection is not ready (ended at stop, src/queue/redis-at-stop.ts, or down).
 */
export const redisGoneWhenClosing =
  (stopping: AbortSignal, closing: AbortSignal, redis: { readonly status: string }) => (): boolean =>
    (stopping.aborted || closing.aborted) && redis.status !== 'ready';

/** A promise that never settles: what a job's outcome becomes once there is no Redis to report it to. */
const NEVER = new Promise<never>(() => undefined);

/** The jobs a worker's processor is running, for a close that cannot count on Redis. */
export interface JobsInFlight {
  /**
   * The processor, wrapped: its jobs are counted while they run. A job that ends once its worker is closing with
   * Redis gone does not report back to BullMQ (its promise never settles): BullMQ would try to record the outcome
   * for ever, retrying "Connection is closed." at once and in a loop (BullMQ 5.81 `retryIfFailed` while closing).
   * Its lock expires instead, and a worker takes the job up again, as after a crash.
   */
  track<A extends unknown[], R>(processor: (...args: A) => Promise<R>): (...args: A) => Promise<R>;
  /** Resolves once no tracked job runs. */
  settled(): Promise<void>;
}

/** Counts a worker's jobs in flight; `redisGone` says when their outcome can no longer reach Redis. */
export function jobsInFlight(redisGone: () => boolean): JobsInFlight {
  const running = new Set<Promise<unknown>>();
  return {
    track:
      (processor) =>
      async (...args) => {
        const job = processor(...args);
        running.add(job);
        try {
          return await job;
        } finally {
          running.delete(job);
          if (redisGone()) await NEVER;
        }
      },
    settled: async () => {
      await Promise.allSettled([...running]);
    },
  };
}

export interface CloseWorkerOptions {
  /** The worker's jobs (see `jobsInFlight`): with Redis gone, the close waits for them rather than for BullMQ. */
  readonly jobs?: Pick<JobsInFlight, 'settled'>;
  /** Whether Redis is gone now (the worker is closing and its connection is not ready). Default: never. */
  readonly redisGone?: () => boolean;
  /** How long the close may take (jobs in flight included) before it is left to the process' exit. */
  readonly boundMs?: number;
  /** How long a worker still opening its connections may take to be ready first. */
  readonly readyWithinMs?: number;
}

/**
 * Closes a BullMQ worker: with Redis there, after letting it finish opening its connections (for at most
 * `readyWithinMs`), then letting its jobs in flight end; with Redis gone, once its own jobs have ended, without
 * waiting on Redis (BullMQ's force close). Either way within `boundMs`: a close still waiting for Redis then is
 * left to the process' exit (the jobs' locks expire and they run again).
 *
 * Why the ready wait (BullMQ 5.81, ioredis 5.11; taskforcesh/bullmq#3546): a worker duplicates its connection for
 * blocking reads. `Worker.close()` while that connection is still in its handshake disconnects it; when the
 * handshake's last answer arrives anyway, ioredis marks the closing connection ready, BullMQ sends its version-check
 * INFO on it, the INFO fails with "Connection is closed." as the socket closes, and BullMQ re-emits that as an
 * 'error' on a connection object whose listeners `close()` already removed: an unhandled rejection. It failed test
 * runs on a busy machine and made `understudy worker` exit 1 on a SIGTERM just after start. A ready worker closes
 * that connection with QUIT, nothing in flight.
 *
 * Why not a plain close with Redis gone (taskforcesh/bullmq#4656): `Worker.close()` waits for its blocking
 * connection's 'end', which one between two reconnection attempts never emits, and for its main loop, which waits
 * for Redis to record each job's outcome. A worker given SIGTERM then ran until SIGKILL.
 */
export async function closeWorker(
  worker: Pick<Worker, 'waitUntilReady' | 'close'>,
  opts: CloseWorkerOptions = {},
): Promise<void> {
  const boundMs = opts.boundMs ?? WORKER_CLOSE_BOUND_MS;
  if (opts.redisGone?.()) {
    await settlesWithin(opts.jobs?.settled() ?? Promise.resolve(), boundMs);
    // Force: neither the blocking connection's 'end' nor the main loop is waited for.
    await settlesWithin(worker.close(true), boundMs);
    return;
  }
  // A worker that cannot get ready is closed all the same; its own 'error' listener has heard why.
  await settlesWithin(worker.waitUntilReady(), opts.readyWithinMs ?? WORKER_READY_WAIT_MS);
  await settlesWithin(worker.close(), boundMs);
}
