import type { Worker } from 'bullmq';

/** How long `closeWorker` lets a worker finish opening its connections; a Redis that is down uses it all. */
export const WORKER_READY_WAIT_MS = 2000;

/**
 * Closes a BullMQ worker, first letting it finish opening its connections (for at most `readyWithinMs`).
 *
 * Why (BullMQ 5.81, ioredis 5.11; taskforcesh/bullmq#3546): a worker duplicates its connection for blocking reads.
 * `Worker.close()` while that connection is still in its handshake disconnects it; when the handshake's last
 * answer arrives anyway, ioredis marks the closing connection ready, BullMQ sends its version-check INFO on it,
 * the INFO fails with "Connection is closed." as the socket closes, and BullMQ re-emits that as an 'error' on a
 * connection object whose listeners `close()` already removed: an unhandled rejection. It failed test runs on a
 * busy machine and made `understudy worker` exit 1 on a SIGTERM just after start. A ready worker closes that
 * connection with QUIT, nothing in flight.
 *
 * When Redis is down the handshake never gets that far and the wait ends at the bound. (Not covered: BullMQ can
 * still re-emit a connect error, e.g. ECONNREFUSED, the same unheard way when a worker is closed while its blocking
 * connection is between reconnection attempts.)
 */
export async function closeWorker(
  worker: Pick<Worker, 'waitUntilReady' | 'close'>,
  readyWithinMs = WORKER_READY_WAIT_MS,
): Promise<void> {
  let bound: NodeJS.Timeout | undefined;
  await Promise.race([
    // A worker that cannot get ready is closed all the same; its own 'error' listener has heard why.
    worker.waitUntilReady().then(
      () => undefined,
      () => undefined,
    ),
    new Promise<void>((resolve) => {
      bound = setTimeout(resolve, readyWithinMs);
      bound.unref();
    }),
  ]);
  clearTimeout(bound);
  await worker.close();
}
