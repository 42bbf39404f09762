import type { WatchKnobs } from '../vocabulary/watch-knobs.js';

/** How fast the change rate forgets: a change weighs half after about 21 s (τ ln 2). */
export const RATE_TAU_MS = 30_000;
/** No collection is probed more often than this, whatever its targets. */
export const MIN_INTERVAL_MS = 2_000;
/** Of its idle budget share, watch plans to use this much when nothing changes (a margin for the bound: route
 * discovery, a probe's jitter). */
const IDLE_MARGIN = 0.7;

/** A collection's recent change rate: an exponentially weighted count of the changes probes found, per second. */
export interface Pace {
  /** Changes per second, as of `at`. */
  readonly rate: number;
  /** When `rate` was last brought up to date (ms). */
  readonly at: number;
}

export const STILL: Pace = { rate: 0, at: 0 };

/** The rate as of `now`: decayed since it was last brought up to date. */
export const rateAt = (pace: Pace, now: number): number =>
  pace.at === 0 ? 0 : pace.rate * Math.exp(-Math.max(0, now - pace.at) / RATE_TAU_MS);

/** The pace after a probe at `now` that found `changes` changes (0: none). */
export function paceAfter(pace: Pace, now: number, changes: number): Pace {
  return { rate: rateAt(pace, now) + (changes * 1000) / RATE_TAU_MS, at: now };
}

/**
 * How often a collection is probed when nothing changes, for a key whose watched collections (over every watched
 * tenant on the key) read `quietReads` in one quiet turn each (one for the probe, one more for a range of the
 * rotation where the probe cannot list every record): as often as 70% of `idleShare` of the key's read budget
 * (`readsPerMinute`) allows, spread evenly over those reads, but never more often than the hot interval. A key with
 * few collections sees a change within seconds even when quiet; one with many stays within `idleShare`, even where
 * that makes the interval longer than the `all` target can bear (the share wins; `status` shows the interval).
 */
export function idleIntervalMs(knobs: WatchKnobs, quietReads: number, readsPerMinute: number): number {
  const idleReads = Math.max(1e-9, knobs.idleShare * readsPerMinute * IDLE_MARGIN);
  return Math.max(hotIntervalMs(knobs), (Math.max(1, quietReads) * 60_000) / idleReads);
}

/** The shortest interval a changing collection is probed at: half the `hot` target, never under 2 s. */
export const hotIntervalMs = (knobs: WatchKnobs): number => Math.max(MIN_INTERVAL_MS, knobs.hotMs / 2);

/**
 * The probe interval of a collection changing at `rate` per second: about half the mean time between its changes
 * (a changing collection is probed about twice per change, so the change waits half an interval on average), between
 * the hot interval and the idle one. A collection changing every 2 s is probed at the hot interval; one changed once
 * a minute ago drifts back to the idle interval as its rate decays.
 */
export function probeIntervalMs(rate: number, hot: number, idle: number): number {
  if (rate <= 0) return idle;
  return Math.min(idle, Math.max(hot, 1000 / (2 * rate)));
}

/** What a turn found, as the next interval sees it. */
export type TurnFound = 'changed' | 'quiet' | 'held';

/**
 * The interval after a turn that found `found` at `now`: a change found is often the first of several, so the next
 * probe comes at the hot interval and the rate decides after that (a quiet probe widens it again); a turn that was
 * held (the collection locked by another run) or failed keeps its interval, at least the hot one.
 */
export function nextInterval(
  found: TurnFound,
  s: { readonly current: number; readonly pace: Pace; readonly hot: number; readonly idle: number },
  now: number,
): number {
  if (found === 'changed') return s.hot;
  if (found === 'held') return Math.max(s.current, s.hot);
  return probeIntervalMs(rateAt(s.pace, now), s.hot, s.idle);
}
