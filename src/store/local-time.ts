/**
 * Local wall-clock times for the `*_local` columns: what a venue prints on its programme, with the UTC offset that
 * held then (`2025-10-23T19:30:00-07:00`). Computed with Intl, which knows each zone's history (DST included).
 */

const formatters = new Map<string, Intl.DateTimeFormat | null>();

const formatterFor = (zone: string): Intl.DateTimeFormat | null => {
  let f = formatters.get(zone);
  if (f === undefined) {
    try {
      f = new Intl.DateTimeFormat('en-US', {
        timeZone: zone,
        hourCycle: 'h23',
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
      });
    } catch {
      f = null; // not an IANA zone this runtime knows
    }
    formatters.set(zone, f);
  }
  return f;
};

/**
 * The offset (minutes east of UTC) of `zone` at `at`, from Intl. Offsets are kept per zone and quarter hour: every
 * zone changes offset on a quarter hour (historic local mean times aside, which Intl reports in whole seconds
 * anyway: those are computed each time), and a programme's performances share a few hundred quarter hours, so
 * Intl's formatter (slow: several microseconds a call) runs once per quarter hour rather than once per record.
 */
const offsets = new Map<string, Map<number, number>>();
const QUARTER_HOUR = 15 * 60_000;
const MAX_QUARTERS = 50_000;

function offsetAt(fmt: Intl.DateTimeFormat, zone: string, at: number): number {
  const quarter = Math.floor(at / QUARTER_HOUR);
  let byQuarter = offsets.get(zone);
  const known = byQuarter?.get(quarter);
  if (known !== undefined) return known;
  const p: Record<string, number> = {};
  for (const part of fmt.formatToParts(at)) if (part.type !== 'literal') p[part.type] = Number(part.value);
  const wall = Date.UTC(p.year ?? 0, (p.month ?? 1) - 1, p.day ?? 1, p.hour ?? 0, p.minute ?? 0, p.second ?? 0);
  // Date.UTC maps years 0-99 to 1900-1999: set the year again.
  const exact = new Date(wall);
  exact.setUTCFullYear(p.year ?? 0);
  const offset = (exact.getTime() - at) / 60_000;
  // Whole quarter hours only are kept (a local mean time of old, e.g. -00:01:15, is computed each time).
  if (Number.isInteger(offset / 15)) {
    if (!byQuarter) {
      byQuarter = new Map();
      offsets.set(zone, byQuarter);
    }
    if (byQuarter.size >= MAX_QUARTERS) byQuarter.clear();
    byQuarter.set(quarter, offset);
  }
  return offset;
}

const two = (n: number): string => String(n).padStart(2, '0');

/**
 * The instant `iso` as local time in `zone`, to the second (milliseconds dropped), with the zone's offset at that
 * instant as `±HH:MM`; null when the instant does not parse or the zone is unknown.
 */
export function localWallTime(iso: string, zone: string): string | null {
  const ms = Date.parse(iso);
  const fmt = formatterFor(zone);
  if (Number.isNaN(ms) || fmt === null) return null;
  const at = Math.floor(ms / 1000) * 1000;
  const offset = Math.round(offsetAt(fmt, zone, at));
  const wall = new Date(at + offset * 60_000);
  const year = wall.getUTCFullYear();
  const date = `${String(year).padStart(4, '0')}-${two(wall.getUTCMonth() + 1)}-${two(wall.getUTCDate())}`;
  const time = `${two(wall.getUTCHours())}:${two(wall.getUTCMinutes())}:${two(wall.getUTCSeconds())}`;
  const abs = Math.abs(offset);
  return `${date}T${time}${offset < 0 ? '-' : '+'}${two(Math.floor(abs / 60))}:${two(abs % 60)}`;
}
