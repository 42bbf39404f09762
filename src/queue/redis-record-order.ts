import type { Redis } from 'ioredis';
import type { RecordTarget } from '../writes/record-line.js';
import type { RecordOrder } from '../writes/record-order.js';

/** The record order (src/writes/record-order.ts) kept in Redis, shared by every process. */
export function createRecordOrder(opts: {
  readonly redis: Redis;
  readonly prefix: string;
  /** Whether a job still waits to run (waiting, delayed, prioritized or active). */
  readonly isPending: (jobId: string) => Promise<boolean>;
}): RecordOrder {
  const { redis, prefix, isPending } = opts;
  const lineKey = (t: RecordTarget) => `${prefix}:writes:order:${t.tenant}:${t.collection}:${t.id}`;
  const seqKey = `${prefix}:writes:seq`;
  return {
    nextSeq: () => redis.incr(seqKey),
    async join(target, jobId, seq) {
      await redis.zadd(lineKey(target), 'NX', seq, jobId);
    },
    async turn(target, jobId, seq) {
      const key = lineKey(target);
      if ((await redis.zscore(key, jobId)) === null) {
        await redis.zadd(key, 'NX', seq ?? (await redis.incr(seqKey)), jobId);
      }
      for (;;) {
        const [head] = await redis.zrange(key, 0, 0);
        if (head === undefined || head === jobId) return { first: true };
        if (await isPending(head)) return { first: false, ahead: head };
        await redis.zrem(key, head);
      }
    },
    async leave(target, jobId) {
      const key = lineKey(target);
      await redis.zrem(key, jobId);
      const [head] = await redis.zrange(key, 0, 0);
      return head ?? null;
    },
  };
}
