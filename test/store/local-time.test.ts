import { describe, expect, it } from 'vitest';
import { TYPED_COLUMNS } from '../../src/store/columns.js';
import { extractColumn } from '../../src/store/extract-row.js';
import { localWallTime } from '../../src/store/local-time.js';

const col = (name: string) => TYPED_COLUMNS['event-instances'].find((c) => c.column === name)!;
const eventCol = (name: string) => TYPED_COLUMNS.events.find((c) => c.column === name)!;

describe('local wall-clock times', () => {
  it('gives the local time with the offset that held at that instant, DST included', () => {
    expect(localWallTime('2025-10-24T02:30:00.000Z', 'America/Los_Angeles')).toBe('2025-10-23T19:30:00-07:00');
    expect(localWallTime('2025-12-24T03:30:00Z', 'America/Los_Angeles')).toBe('2025-12-23T19:30:00-08:00');
    expect(localWallTime('2026-03-29T00:59:59Z', 'Europe/London')).toBe('2026-03-29T00:59:59+00:00');
    expect(localWallTime('2026-03-29T01:00:00Z', 'Europe/London')).toBe('2026-03-29T02:00:00+01:00');
    expect(localWallTime('2026-01-10T08:30:00Z', 'Asia/Kolkata')).toBe('2026-01-10T14:00:00+05:30');
    expect(localWallTime('2026-01-10T08:30:00+02:00', 'UTC')).toBe('2026-01-10T06:30:00+00:00');
  });

  it('agrees with Intl at every instant, however the offsets it keeps per quarter hour were filled', () => {
    const formats = new Map<string, Intl.DateTimeFormat>();
    const format = (zone: string) =>
      formats.get(zone) ??
      formats
        .set(
          zone,
          new Intl.DateTimeFormat('en-US', {
            timeZone: zone,
            hourCycle: 'h23',
            year: 'numeric',
            month: '2-digit',
            day: '2-digit',
            hour: '2-digit',
            minute: '2-digit',
            second: '2-digit',
          }),
        )
        .get(zone)!;
    const reference = (iso: string, zone: string) => {
      const at = Math.floor(Date.parse(iso) / 1000) * 1000;
      const f = format(zone);
      const p = Object.fromEntries(f.formatToParts(at).map((x) => [x.type, x.value]));
      const wall = Date.UTC(+p.year!, +p.month! - 1, +p.day!, +p.hour!, +p.minute!, +p.second!);
      const off = Math.round((wall - at) / 60_000);
      const hh = String(Math.floor(Math.abs(off) / 60)).padStart(2, '0');
      const mm = String(Math.abs(off) % 60).padStart(2, '0');
      return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}${off < 0 ? '-' : '+'}${hh}:${mm}`;
    };
    const zones = ['Europe/London', 'America/Los_Angeles', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'America/St_Johns'];
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let i = 0; i < 4000; i++) {
      // Around the transitions of 2026 too: instants a few seconds either side of each quarter hour.
      const base = Date.UTC(2026, 0, 1) + Math.floor(next() * 365 * 96) * 900_000;
      const iso = new Date(base + Math.floor((next() - 0.5) * 10) * 1000).toISOString();
      const zone = zones[i % zones.length]!;
      expect(localWallTime(iso, zone), `${iso} ${zone}`).toBe(reference(iso, zone));
    }
    // Each transition of 2026 in each zone, a second either side of it.
    for (const zone of zones) {
      let transitions = 0;
      let prev = reference(new Date(Date.UTC(2026, 0, 1)).toISOString(), zone).slice(-6);
      for (let t = Date.UTC(2026, 0, 1); t < Date.UTC(2027, 0, 1); t += 900_000) {
        const off = reference(new Date(t).toISOString(), zone).slice(-6);
        if (off === prev) continue;
        prev = off;
        transitions++;
        for (const d of [-1000, 0, 1000]) {
          const iso = new Date(t + d).toISOString();
          expect(localWallTime(iso, zone), `${iso} ${zone}`).toBe(reference(iso, zone));
        }
      }
      if (zone !== 'Asia/Kathmandu') expect(transitions, zone).toBe(2);
    }
  });

  it('drops milliseconds and says nothing for an unknown zone or a date that does not parse', () => {
    expect(localWallTime('2026-01-10T08:30:15.999Z', 'Europe/Paris')).toBe('2026-01-10T09:30:15+01:00');
    expect(localWallTime('2026-01-10T08:30:00Z', 'Europe/Londn')).toBeNull();
    expect(localWallTime('next tuesday', 'Europe/London')).toBeNull();
  });

  it('fills start_local from startDate_tz and end_local from endDate_tz, else startDate_tz', () => {
    const doc = {
      startDate: '2025-10-24T02:30:00Z',
      startDate_tz: 'America/Los_Angeles',
      endDate: '2025-10-24T05:00:00Z',
    };
    expect(extractColumn(doc, col('start_local'))).toBe('2025-10-23T19:30:00-07:00');
    expect(extractColumn(doc, col('end_local'))).toBe('2025-10-23T22:00:00-07:00');
    expect(extractColumn({ ...doc, endDate_tz: 'Europe/London' }, eventCol('end_local'))).toBe(
      '2025-10-24T06:00:00+01:00',
    );
    expect(extractColumn({ startDate: doc.startDate }, col('start_local'))).toBeNull();
    expect(extractColumn({ startDate_tz: 'Europe/London' }, col('start_local'))).toBeNull();
  });
});
