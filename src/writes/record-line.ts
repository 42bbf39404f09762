/** A record that writes are lined up for. */
export interface RecordTarget {
  readonly tenant: string;
  readonly collection: string;
  readonly id: string;
}

/**
 * The part of the per-record line of pending writes (enqueue order, shared by every process) that running a write
 * needs. A job may run only while it is first in its record's line.
 */
export interface RecordLine {
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
