/**
 * A spell of failures of one thing (an upstream key, a probe), for logs that say each spell once instead of each
 * failure: the first failure of a spell, and each change of its cause, is news; repeats of the same cause are only
 * counted; the first success after them ends the spell, with the count and how long it lasted. The spell decides;
 * its caller logs (as `decideRetry` decides and the retry layer waits).
 */
export interface FailureSpell {
  /**
   * A failure with `cause` (a short, stable text: `ECONNREFUSED at 127.0.0.1:4010: …`, `HTTP 503`): the news to log
   * when it opens a spell or changes its cause, null when it repeats the cause already said (it is counted).
   */
  failed(cause: string): SpellNews | null;
  /** A success: the spell it ends (to log once), or null when none was running. */
  succeeded(): SpellEnd | null;
}

/** A spell opened, or its cause changed: the failures before this one, when it changed. */
export interface SpellNews {
  readonly cause: string;
  /** The cause said before (absent when this failure opens the spell). */
  readonly previousCause?: string;
  /** Failures of the spell before this one. */
  readonly failuresBefore: number;
}

/** A spell ended by a success. */
export interface SpellEnd {
  /** Failures in the spell, every cause counted. */
  readonly failures: number;
  /** From its first failure to the success. */
  readonly ms: number;
  /** Its last cause. */
  readonly cause: string;
}

/** A spell tracker; `now` is the clock the spell's duration is read from. */
export function failureSpell(now: () => number = Date.now): FailureSpell {
  let spell: { cause: string; failures: number; since: number } | null = null;
  return {
    failed(cause) {
      if (!spell) {
        spell = { cause, failures: 1, since: now() };
        return { cause, failuresBefore: 0 };
      }
      const before = spell.failures++;
      if (spell.cause === cause) return null;
      const previousCause = spell.cause;
      spell.cause = cause;
      return { cause, previousCause, failuresBefore: before };
    },
    succeeded() {
      if (!spell) return null;
      const end = { failures: spell.failures, ms: now() - spell.since, cause: spell.cause };
      spell = null;
      return end;
    },
  };
}
