/** A record that writes are lined up for. */
export interface RecordTarget {
  readonly tenant: string;
  readonly collection: string;
  readonly id: string;
}

/**
 * The line of pending writes per record, in enqueue order, shared by every process through Redis: a sorted set
 * per record (`{prefix}:writes:order:{tenant}:{collection}:{id}`) of job ids scored by their enqueue sequence
 * number (`INCR {prefix}:writes:seq`). A job may run only while it is first in its line.
 */
export interface RecordOrder {
  /** The next enqueue sequence number. */
  nextSeq(): Promise<number>;
  /** Puts a job in its record's line (a job already there keeps its place). */
  join(target: RecordTarget, jobId: string, seq: number): Promise<void>;
  /**
   * Whether the job is first in line, joining it first if its enqueuer did not (with `seq`, else a fresh number).
   * Jobs ahead that are no longer pending (finished, failed, removed) are dropped from the line.
   */
  turn(
    target: RecordTarget,
    jobId: string,
    seq: number | undefined,
  ): Promise<{ first: true } | { first: false; ahead: string }>;
  /** Takes a finished (or permanently failed) job out of its line; returns the job now first, or null. */
  leave(target: RecordTarget, jobId: string): Promise<string | null>;
}
