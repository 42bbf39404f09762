import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import { isRedisConnectionError } from './redis-settings.js';

/**
 * What a BullMQ queue or worker (or a Redis connection) does with its `error` events. Every one gets a listener
 * where it is made (the queue openers take one as a required parameter): an unheard `error` is either lost (BullMQ
 * 5 drops a connection's error for a queue that does not listen) or printed raw on the console (an error it emits
 * itself, and ioredis for a connection), which breaks a JSON log.
 */
export type ErrorListener = (err: Error) => void;

/**
 * For a long-lived process: one JSON line at `warn` (`what`, with `reason`) per error, except a lost connection,
 * which the connection's own back-off lines already report (`Redis unreachable …`, src/queue/redis-settings.ts).
 */
export const warnUnlessRedisDown =
  (log: Logger, what: string): ErrorListener =>
  (err) => {
    if (!isRedisConnectionError(err)) log.warn({ reason: describeError(err) }, what);
  };

/** For a short command: each call that needs Redis fails with the error itself, so the event adds nothing. */
export const errorsFailTheCalls: ErrorListener = () => undefined;
