import type { Redis } from 'ioredis';

/**
 * A long-lived connection when its process stops. With Redis reachable nothing changes: the workers hand their jobs
 * back, then the connection says QUIT. With Redis unreachable, everything that talks to it would wait for ever
 * (commands stay queued through an outage: `maxRetriesPerRequest: null`, as BullMQ workers require), and a worker
 * given SIGTERM ran until SIGKILL. So at stop such a connection is ended at once: the commands waiting on it fail
 * ("Connection is closed."), and each part's close goes on without it (the BullMQ workers: see closeWorker).
 */

/**
 * Ends a connection now, whatever its state, failing the commands that wait on it. Between two reconnection
 * attempts `disconnect()` alone would leave it hanging (ioredis 5.11 then only clears the retry timer, and with no
 * socket nothing closes: no 'end', the commands still queued), so one more attempt is made: refused, it ends the
 * connection, which ioredis no longer retries once closed by hand.
 */
export function endNow(redis: Redis): void {
  if (redis.status === 'end') return;
  const betweenAttempts = redis.status === 'reconnecting';
  redis.disconnect();
  if (betweenAttempts) redis.connect().catch(() => undefined); // its failure is the point: the connection ends
}

/**
 * Keeps the connections duplicated from `redis` (BullMQ duplicates a worker's connection for its blocking reads)
 * while they live, each with an 'error' listener of its own, and returns them.
 */
export function followDuplicates(redis: Redis): () => readonly Redis[] {
  const duplicates = new Set<Redis>();
  const duplicate = redis.duplicate.bind(redis);
  redis.duplicate = (...args: Parameters<Redis['duplicate']>): Redis => {
    const d = duplicate(...args);
    // BullMQ listens while it uses the connection; an attempt made after it let go must not go unheard.
    d.on('error', () => undefined);
    duplicates.add(d);
    d.once('end', () => duplicates.delete(d));
    return d;
  };
  return () => [...duplicates];
}

/**
 * When `stopping` aborts with `redis` not ready, calls `onUnreachable` (the one line that says so), then ends it
 * and every connection duplicated from it (`duplicates`, from followDuplicates: a blocking read left waiting would
 * hold its worker's timers, and so the process, for seconds). The connection must be made with a `retryStrategy`
 * that gives up once `stopping` has aborted, so that one that drops later in the shutdown ends too, rather than
 * holding a close.
 */
export function endWhenStoppedUnreachable(
  redis: Redis,
  duplicates: () => readonly Redis[],
  stopping: AbortSignal,
  onUnreachable: () => void,
): void {
  const atStop = () => {
    if (redis.status === 'ready' || redis.status === 'end') return;
    onUnreachable();
    // The blocking reads at once, before BullMQ's own close marks their connections ended without ending them.
    for (const d of duplicates()) endNow(d);
    // The rest once the stop has reached every part (the awaits their stop listeners resume): a job whose wait for
    // Redis then fails is one being stopped, and is handed back rather than failed.
    setImmediate(() => endNow(redis));
  };
  if (stopping.aborted) atStop();
  else stopping.addEventListener('abort', atStop, { once: true });
}
