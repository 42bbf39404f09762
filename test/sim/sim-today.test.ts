import { describe, expect, it, onTestFinished } from 'vitest';
import { startSimulator } from '../../src/sim/start-simulator.js';

const instances = async (aroundDay?: number) => {
  const sim = await startSimulator({ seed: 7, records: 6, ...(aroundDay !== undefined ? { aroundDay } : {}) });
  onTestFinished(() => sim.close());
  return sim.controls.docs(sim.tenants[0]!.slug, 'event-instances');
};
const DAY = 86_400_000;

describe('simulator programme placed around a day', () => {
  it('is the same all day, and moves by whole days with the day', async () => {
    const morning = Date.UTC(2031, 4, 2, 0, 5);
    const a = await instances(morning);
    expect(await instances(morning + 20 * 3_600_000)).toEqual(a);
    const next = await instances(morning + DAY);
    const starts = (docs: typeof a) => docs.map((d) => Date.parse(String(d.startDate)));
    const moved = starts(next).map((t, i) => t - starts(a)[i]!);
    // Wall-clock times stay 19:30 or 14:00 local, so a DST change may shift a start by an hour.
    expect(moved.every((ms) => Math.abs(ms - DAY) <= 3_600_000)).toBe(true);
  });

  it('defaults to mid-January 2026, as before', async () => {
    const years = (await instances()).map((d) => String(d.startDate).slice(0, 4));
    expect(new Set(years)).toEqual(new Set(['2025', '2026']));
  });
});
