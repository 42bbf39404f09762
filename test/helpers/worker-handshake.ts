import { type Command, Redis } from 'ioredis';
import { onTestFinished } from 'vitest';

/** What the process emits as `event` from now until the test finishes. */
export const processEvents = <T>(event: 'unhandledRejection' | 'warning'): T[] => {
  const seen: T[] = [];
  const listener = (value: T) => seen.push(value);
  process.on(event, listener);
  onTestFinished(() => {
    process.off(event, listener);
  });
  return seen;
};

/** Unhandled rejections while the test runs (vitest reports them too, against whichever test is then current). */
export const unhandledRejections = (): unknown[] => processEvents<unknown>('unhandledRejection');

/**
 * A connection to give a BullMQ worker, and a promise of the moment the worker's blocking connection (its
 * duplicate) is in ioredis' handshake (see `inHandshake`). Disconnected when the test finishes.
 */
export const handshaking = (url: string) => {
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  onTestFinished(() => {
    redis.disconnect();
  });
  return { redis, inHandshake: inHandshake(redis) };
};

/**
 * Resolves at the moment the next duplicate of `redis` (a BullMQ worker's blocking connection) is in ioredis'
 * handshake: connected, its ready check (an INFO) sent and not yet answered.
 */
export const inHandshake = (redis: Redis): Promise<void> => {
  let sent: () => void = () => {};
  const reached = new Promise<void>((resolve) => {
    sent = resolve;
  });
  redis.duplicate = (override) => {
    const dup = Redis.prototype.duplicate.call(redis, override);
    const send = dup.sendCommand.bind(dup);
    dup.sendCommand = (command: Command, stream) => {
      const result = send(command, stream);
      if (command.name === 'info' && dup.status === 'connect') sent();
      return result;
    };
    return dup;
  };
  return reached;
};

/**
 * Resolves once no socket named `prefix:…` (a BullMQ connection of that prefix) is open on the server, then lets
 * the callbacks of the sockets' close run (where a failed handshake would be rejected).
 */
export const connectionsGone = async (url: string, prefix: string): Promise<void> => {
  const admin = new Redis(url);
  try {
    for (;;) {
      const list = (await admin.call('CLIENT', 'LIST')) as string;
      if (!list.includes(`name=${prefix}:`)) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    admin.disconnect();
  }
  await new Promise((resolve) => setImmediate(resolve));
};
