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
