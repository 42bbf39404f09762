import { UsageError } from '../errors.js';
import { durationSeconds } from '../vocabulary/duration.js';

/**
 * A duration as a number of seconds: `3600` (seconds), `90s`, `15m`, `2h`, `1d`, `1h30m`, or ISO 8601 (`PT1H30M`,
 * `P1D`). Throws `UsageError` naming `flag` for anything else.
 */
export function parseDuration(text: string, flag: string): number {
  const seconds = durationSeconds(text);
  if (seconds === null) {
    throw new UsageError(`${flag} ${text}: not a duration (seconds, or e.g. 90s, 15m, 2h, 1d, 1h30m, PT1H30M)`);
  }
  return seconds;
}

/** `in 6 h 09 min`, `in 12 min`, `in 40 s`. */
export function inWords(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `in ${s} s`;
  const min = Math.round(s / 60);
  if (min < 60) return `in ${min} min`;
  return `in ${Math.floor(min / 60)} h ${String(min % 60).padStart(2, '0')} min`;
}
