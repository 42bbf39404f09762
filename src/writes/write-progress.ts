/** Kept in the job's `progress` across attempts (BullMQ itself makes one attempt per write; we count ours). */
export interface WriteProgress {
  /** Attempts that went (or may have gone) upstream. */
  readonly attempts: number;
  /** An attempt went out and no usable answer came. */
  readonly unknownOutcome: boolean;
  /** Set just before sending, cleared after: still set at the next start means the process died mid-request. */
  readonly sending: boolean;
  /** Time spent on 429s so far: attempts that ended in one, and the delays they asked for. */
  readonly rateWaitMs: number;
}

/** Reads a job's stored progress back; anything unreadable counts as a fresh start. */
export function readProgress(p: unknown): WriteProgress {
  const o = (typeof p === 'object' && p !== null ? p : {}) as Record<string, unknown>;
  return {
    attempts: typeof o.attempts === 'number' && o.attempts >= 0 ? o.attempts : 0,
    unknownOutcome: o.unknownOutcome === true,
    sending: o.sending === true,
    rateWaitMs: typeof o.rateWaitMs === 'number' && o.rateWaitMs >= 0 ? o.rateWaitMs : 0,
  };
}
