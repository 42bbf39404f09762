/** How often the worker looks at the change log's end for new changes (a change-worker option, `pollMs`). */
export const DISPATCH_POLL_MS = 200;

/** A dispatch pass runs at least this often even when the log's end has not moved (others' deliveries ended). */
export const FULL_DISPATCH_EVERY_MS = 2000;

/** The first prune of the change log comes this long after the worker starts, then every `PRUNE_EVERY_MS`. */
export const FIRST_PRUNE_AFTER_MS = 60_000;
export const PRUNE_EVERY_MS = 3_600_000;

const DAY_MS = 86_400_000;

/** The instant before which changes are pruned: `retainDays` (config `changes.retainDays`) before `now`. */
export const pruneBefore = (now: number, retainDays: number): string =>
  new Date(now - retainDays * DAY_MS).toISOString();

/**
 * The webhook dispatch's debounce: a pass is due when the log's end moved, when a delivery of this process ended
 * (`nudge`), or when the last full pass is `FULL_DISPATCH_EVERY_MS` old (for deliveries of other processes).
 */
export function dispatchDebounce() {
  let seen = -1;
  let dirty = true;
  let lastFull = 0;
  return {
    /** Whether a pass is due now, the log's end being `end`; a due pass is counted as made. */
    due(end: number, now: number): boolean {
      if (end === seen && !dirty && now - lastFull < FULL_DISPATCH_EVERY_MS) return false;
      seen = end;
      dirty = false;
      lastFull = now;
      return true;
    },
    /** A delivery ended: the next look is a pass. */
    nudge(): void {
      dirty = true;
    },
  };
}
