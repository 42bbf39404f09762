import type { RecordLine, RecordTarget } from './record-line.js';

/**
 * The line of pending writes per record, in enqueue order, shared by every process through Redis: a sorted set
 * per record (`{prefix}:writes:order:{tenant}:{collection}:{id}`) of job ids scored by their enqueue sequence
 * number (`INCR {prefix}:writes:seq`). A job may run only while it is first in its line.
 */
export interface RecordOrder extends RecordLine {
  /** The next enqueue sequence number. */
  nextSeq(): Promise<number>;
  /** Puts a job in its record's line (a job already there keeps its place). */
  join(target: RecordTarget, jobId: string, seq: number): Promise<void>;
}
