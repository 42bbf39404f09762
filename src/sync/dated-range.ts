import type { Where } from '../partners/partners-client.js';
import type { RowVersion } from './self-check.js';
import type { Position } from './store-port.js';

/** A half-open `updatedAt` range [from, before) of dated records; a null bound is open. */
export interface DatedRange {
  readonly from: string | null;
  readonly before: string | null;
}

/** Every dated record, those dated in the future included. */
export const EVERY_DATED: DatedRange = { from: null, before: null };

/** The upstream's filter for the records of a range (never the undated ones). */
export const rangeWhere = (r: DatedRange): Where => ({
  and: [
    { updatedAt: { exists: true } },
    ...(r.from === null ? [] : [{ updatedAt: { greater_than_equal: r.from } }]),
    ...(r.before === null ? [] : [{ updatedAt: { less_than: r.before } }]),
  ],
});

/** The ISO instant one millisecond after `at`: the start of the range that follows every record at `at`. */
export const justAfter = (at: string): string => new Date(Date.parse(at) + 1).toISOString();

/** How a range as the upstream listed it differs from the mirror's rows in it. */
export interface RangeDiff {
  /** Listed records the mirror lacks, or holds in an older version. */
  readonly stale: readonly Position[];
  /** Mirror rows the listing leaves out: deleted, unpublished, or moved out of the range by an edit. */
  readonly gone: readonly RowVersion[];
}

/**
 * Compares a whole range as the upstream listed it (every record in it, by key and `updatedAt`) with the mirror's
 * live rows in the same range. A row newer than its listing is not stale: a pass committed it since the read.
 */
export function diffRange(listed: readonly Position[], mine: readonly RowVersion[]): RangeDiff {
  const versions = new Map(mine.map((m) => [m.id, m.updatedAt]));
  const stale = listed.filter((p) => {
    const have = versions.get(p.id);
    return have === undefined || have === null || Date.parse(have) < Date.parse(p.updatedAt);
  });
  const ids = new Set(listed.map((p) => p.id));
  return { stale, gone: mine.filter((m) => !ids.has(m.id)) };
}

/** Whether a diff finds anything. */
export const differs = (d: RangeDiff): boolean => d.stale.length + d.gone.length > 0;
