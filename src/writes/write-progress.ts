import { isJsonObject, type JsonObject } from '../vocabulary/ids.js';

/** The last error of a write: its code (`US_…`), the upstream's HTTP status and the message. */
export interface WriteError {
  readonly code: string;
  readonly status: number | null;
  readonly message: string;
}

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
  /** Why the last attempt failed (a write retrying, or failed for good): what `getWrite` reports. */
  readonly error?: WriteError;
  /**
   * What a versioned update saved before its sequence's first write (versioned-sequence.ts): the attempt after one
   * cut off mid-sequence reads it. Kept across attempts.
   */
  readonly sequence?: JsonObject;
}

const readError = (e: unknown): WriteError | undefined => {
  const o = (typeof e === 'object' && e !== null ? e : {}) as Record<string, unknown>;
  if (typeof o.code !== 'string' || typeof o.message !== 'string') return undefined;
  return { code: o.code, status: typeof o.status === 'number' ? o.status : null, message: o.message };
};

/** Reads a job's stored progress back; anything unreadable counts as a fresh start. */
export function readProgress(p: unknown): WriteProgress {
  const o = (typeof p === 'object' && p !== null ? p : {}) as Record<string, unknown>;
  const error = readError(o.error);
  return {
    attempts: typeof o.attempts === 'number' && o.attempts >= 0 ? o.attempts : 0,
    unknownOutcome: o.unknownOutcome === true,
    sending: o.sending === true,
    rateWaitMs: typeof o.rateWaitMs === 'number' && o.rateWaitMs >= 0 ? o.rateWaitMs : 0,
    ...(error ? { error } : {}),
    ...(isJsonObject(o.sequence) ? { sequence: o.sequence as JsonObject } : {}),
  };
}
