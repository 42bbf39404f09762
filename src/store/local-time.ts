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
  const p: Record<string, number> = {};
  for (const part of fmt.formatToParts(at)) if (part.type !== 'literal') p[part.type] = Number(part.value);
  const year = p.year ?? 0;
  const wall = Date.UTC(year, (p.month ?? 1) - 1, p.day ?? 1, p.hour ?? 0, p.minute ?? 0, p.second ?? 0);
  const offset = Math.round((wall - at) / 60_000);
  const abs = Math.abs(offset);
  const date = `${String(year).padStart(4, '0')}-${two(p.month ?? 1)}-${two(p.day ?? 1)}`;
  const time = `${two(p.hour ?? 0)}:${two(p.minute ?? 0)}:${two(p.second ?? 0)}`;
  return `${date}T${time}${offset < 0 ? '-' : '+'}${two(Math.floor(abs / 60))}:${two(abs % 60)}`;
}
