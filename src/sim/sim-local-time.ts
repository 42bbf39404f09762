import type { GenContext } from './sim-doc-parts.js';

// Local wall times in a time zone, for generated performances.

// Offsets of a time zone, cached per zone and UTC day (the day's offset at noon is good enough for a generator).
const offsetCache = new Map<string, number>();
const formatters = new Map<string, Intl.DateTimeFormat>();
const tzOffsetMs = (tz: string, utcMs: number): number => {
  const day = Math.floor(utcMs / 86_400_000);
  const key = `${tz}|${day}`;
  const hit = offsetCache.get(key);
  if (hit !== undefined) return hit;
  let fmt = formatters.get(tz);
  if (!fmt) {
    fmt = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    });
    formatters.set(tz, fmt);
  }
  const noon = day * 86_400_000 + 43_200_000;
  const parts: Record<string, number> = {};
  for (const p of fmt.formatToParts(noon)) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const local = Date.UTC(parts.year ?? 0, (parts.month ?? 1) - 1, parts.day ?? 1, parts.hour ?? 0, parts.minute ?? 0);
  const off = local - noon;
  offsetCache.set(key, off);
  return off;
};

/** A performance time: local wall time in `tz` on a day near `aroundMs`, as UTC instant and as local-as-UTC. */
export const performance = (g: GenContext, tz: string, dayMs: number): { utc: number; localAsUtc: number } => {
  const day = Math.floor(dayMs / 86_400_000) * 86_400_000;
  const localAsUtc = day + (g.prng.chance(0.75) ? 19.5 : 14) * 3_600_000;
  return { utc: localAsUtc - tzOffsetMs(tz, day), localAsUtc };
};
