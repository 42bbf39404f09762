import { describe, expect, it } from 'vitest';
import { TURN_READS, WatchKeys, WatchMeter } from '../../src/sync/watch-meter.js';
import {
  hotIntervalMs,
  idleIntervalMs,
  MIN_INTERVAL_MS,
  nextInterval,
  paceAfter,
  probeIntervalMs,
  rateAt,
  STILL,
} from '../../src/sync/watch-pace.js';
import { DEFAULT_WATCH } from '../../src/vocabulary/watch-knobs.js';

describe('watch pace', () => {
  const hot = hotIntervalMs(DEFAULT_WATCH);
  const idle = idleIntervalMs(DEFAULT_WATCH, 12, 100);

  it('probes a quiet key as often as 70% of idleShare allows, never more often than the hot interval', () => {
    expect(hot).toBe(5_000);
    // 12 collections every 51.4 s: 14 reads a minute of 100, under the 20 idleShare allows.
    expect(idle).toBeCloseTo(51_429, 0);
    expect((12 * 60_000) / idle).toBeCloseTo(14, 5);
    // 2 collections: every 8.6 s (a quiet edit is seen within seconds); 1: the hot interval at most.
    expect(idleIntervalMs(DEFAULT_WATCH, 2, 100)).toBeCloseTo(8_571, 0);
    expect(idleIntervalMs(DEFAULT_WATCH, 1, 100)).toBe(5_000);
    // 12 collections on a key of 1000 reads a minute: about the hot interval; with a tiny idleShare, the share wins.
    expect(idleIntervalMs(DEFAULT_WATCH, 12, 1000)).toBeCloseTo(5_143, 0);
    expect(idleIntervalMs({ ...DEFAULT_WATCH, idleShare: 0.01 }, 12, 1000)).toBeCloseTo(102_857, 0);
    // 40 collections on one key: widened so their probes stay within 70% of idleShare (14 reads a minute).
    const many = idleIntervalMs(DEFAULT_WATCH, 40, 100);
    expect((40 * 60_000) / many).toBeCloseTo(14, 5);
    expect(idleIntervalMs({ ...DEFAULT_WATCH, hotMs: 1000 }, 1, 100)).toBeGreaterThanOrEqual(MIN_INTERVAL_MS);
    expect(hotIntervalMs({ ...DEFAULT_WATCH, hotMs: 1000 })).toBe(MIN_INTERVAL_MS);
  });

  it('probes a collection changing every 2 s at the hot interval, and drifts back to idle once it stops', () => {
    let pace = STILL;
    let t = 1_000_000;
    // A change found at every probe, probed every 5 s for two minutes.
    for (let i = 0; i < 24; i++) {
      pace = paceAfter(pace, t, 1);
      t += 5_000;
    }
    expect(probeIntervalMs(rateAt(pace, t), hot, idle)).toBe(hot);
    // One minute without change: wider; three minutes: idle.
    expect(probeIntervalMs(rateAt(pace, t + 60_000), hot, idle)).toBeGreaterThan(hot);
    expect(probeIntervalMs(rateAt(pace, t + 180_000), hot, idle)).toBe(idle);
  });

  it('never probes a quiet collection more often than idle, and one changed once briefly sooner', () => {
    expect(probeIntervalMs(0, hot, idle)).toBe(idle);
    const once = paceAfter(STILL, 1000, 1);
    const next = probeIntervalMs(rateAt(once, 1000), hot, idle);
    expect(next).toBeGreaterThan(hot);
    expect(next).toBeLessThan(idle);
    expect(rateAt(paceAfter(once, 2000, 0), 2000)).toBeLessThan(rateAt(once, 1000));
  });

  it('after a turn: hot after a change, the rate after a quiet one, at least hot and no sooner after a held one', () => {
    const changing = paceAfter(STILL, 1000, 1);
    const s = { current: 20_000, pace: changing, hot, idle };
    expect(nextInterval('changed', s, 1000)).toBe(hot);
    expect(nextInterval('quiet', s, 1000)).toBe(probeIntervalMs(rateAt(changing, 1000), hot, idle));
    expect(nextInterval('quiet', { ...s, pace: STILL }, 1000)).toBe(idle);
    expect(nextInterval('held', s, 1000)).toBe(20_000);
    expect(nextInterval('held', { ...s, current: 1000 }, 1000)).toBe(hot);
  });
});

describe('watch meter', () => {
  it("holds watch to maxShare of the key's window, and says how long until it may go on", () => {
    const m = new WatchMeter({ readsPerWindow: 100, windowMs: 60_000, maxShare: 0.6 });
    expect(m.cap).toBe(60);
    for (let i = 0; i < 59; i++) m.count(1000 + i * 100);
    expect(m.waitFor(7000, 1)).toBe(0);
    // 59 sent: two more would pass the cap; the first one sent leaves the window at 61 000.
    expect(m.waitFor(7000, 2)).toBe(1000 + 60_000 - 7000);
    expect(m.share(7000)).toBeCloseTo(0.59, 5);
    expect(m.used(61_001)).toBe(58);
    expect(m.waitFor(61_001, 2)).toBe(0);
  });

  it('holds what turns under way may send, so turns starting together never pass the cap', () => {
    const m = new WatchMeter({ readsPerWindow: 100, windowMs: 60_000, maxShare: 0.6 });
    for (let i = 0; i < 48; i++) m.count(1000);
    const a = m.hold(2000, 6);
    const b = m.hold(2000, 6);
    expect(a && b).toBeTruthy();
    // 48 sent and 12 held: a third turn waits.
    expect(m.hold(2000, 6)).toBeNull();
    // a sends 2 of its 6 and ends: its other 4 come back, still not enough for 6 more.
    if (!a || !b) throw new Error('held');
    m.count(2100, a);
    m.count(2100, a);
    m.release(a);
    expect(m.used(2200)).toBe(50);
    expect(m.hold(2200, 6)).toBeNull();
    m.release(b);
    expect(m.hold(2200, 6)).not.toBeNull();
  });

  it('applies lowered limits to the next hold, the requests already sent still counting', () => {
    const m = new WatchMeter({ readsPerWindow: 100, windowMs: 60_000, maxShare: 0.6 });
    for (let i = 0; i < 40; i++) m.count(1000);
    expect(m.hold(2000, 6)).not.toBeNull();
    m.apply({ readsPerWindow: 100, windowMs: 60_000, maxShare: 0.3 });
    expect(m.cap).toBe(30);
    expect(m.hold(2000, 6)).toBeNull();
    // Once the 40 have left the window (and the first hold is given back), a turn may go again.
    expect(m.waitFor(2000, 6)).toBe(1000 + 60_000 - 2000);
    expect(m.used(61_001)).toBe(0);
  });

  it('backs a turn off until its cost fits, plus a tenth of its interval (at most 3 s)', () => {
    const m = new WatchMeter({ readsPerWindow: 100, windowMs: 60_000, maxShare: 0.6 });
    for (let i = 0; i < 60 - TURN_READS + 1; i++) m.count(1000);
    expect(m.holdTurn(2000)).toBeNull();
    expect(m.turnBackoff(2000, 10_000)).toBe(59_000 + 1000);
    expect(m.turnBackoff(2000, 120_000)).toBe(59_000 + 3000);
    expect(m.holdTurn(61_001)).not.toBeNull();
  });

  it("shares each key's quiet reads among its collections' idle intervals", () => {
    const keys = new WatchKeys();
    const budget = { reads: 100, writes: 20, windowMs: 60_000 };
    keys.addQuietReads('a', 12);
    keys.addQuietReads('b', 2);
    expect(keys.idleInterval('a', DEFAULT_WATCH, budget)).toBe(idleIntervalMs(DEFAULT_WATCH, 12, 100));
    expect(keys.quietReadsInAll()).toBe(14);
    keys.addQuietReads('a', -12);
    expect(keys.idleInterval('a', DEFAULT_WATCH, budget)).toBe(idleIntervalMs(DEFAULT_WATCH, 0, 100));
    expect(keys.meterOf('a', { readsPerWindow: 100, windowMs: 60_000, maxShare: 0.6 })).toBe(
      keys.meterOf('a', { readsPerWindow: 1, windowMs: 1, maxShare: 1 }),
    );
  });
});
