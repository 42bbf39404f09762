import { hasMore } from '../partners/list-envelope.js';
import type { CallOptions, PartnersClient } from '../partners/partners-client.js';
import { systemClock } from '../vocabulary/clock.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import {
  type DatedRange,
  differs,
  diffRange,
  EVERY_DATED,
  justAfter,
  type RangeDiff,
  rangeWhere,
} from './dated-range.js';
import type { ReadRoutes } from './discover-routes.js';
import { findDeletions } from './find-deletions.js';
import { keyFieldFor, positionOf } from './position.js';
import { type Position, PUBLISHED, type Store, type SyncKey } from './store-port.js';
import { type CollectionReport, LOCKED, type SyncDeps, syncCollection, type TenantTarget } from './sync-collection.js';
import { DEFAULT_CLOCK_SKEW_MS } from './sync-run.js';
import type { WatchStore } from './watch-port.js';

/** How a watched collection's turn ended: nothing new, a change mirrored, rows found gone, held, or a failure. */
export type TickOutcome = 'quiet' | 'changed' | 'deleted' | 'locked' | 'failed';

/** The earliest instant a mirror row can carry: the mirror's rows from it on are its dated ones. */
const DAWN = '0001-01-01T00:00:00.000Z';

/** Records one probe (and one range of the rotation) lists: a page at the sync's largest clamp. */
export const PROBE_RECORDS = 100;

/** A range the upstream listed whole: its records by key and `updatedAt`. */
export interface Listing {
  readonly range: DatedRange;
  readonly records: readonly Position[];
}

/** What one probe of a collection found: the upstream's newest records and its count up to an instant. */
export interface ProbeReading {
  /** The instant the probe counted up to (ISO). */
  readonly upTo: string;
  /** The upstream's published records dated up to `upTo` (`totalDocs`), or null when its answer could not say. */
  readonly total: number | null;
  /**
   * The newest records, listed whole from where the listing starts (the collection's start when it listed them
   * all) to the end, those dated in the future included; null when the answer could not be read (a record without
   * its date listed among them).
   */
  readonly listed: Listing | null;
}

/** One sorted read of a range: its first records, its count, and whether more lie past the page. */
interface Read {
  readonly records: readonly Position[];
  readonly total: number | null;
  /** More records lie in the range than listed: the records at the last instant listed may go on past the page. */
  readonly cut: boolean;
}

const SELECT_POSITION = (keyField: string) => ({ [keyField]: true, updatedAt: true });

/**
 * One `limit=100` read of `range`, only the key and `updatedAt` selected, `depth=0`, newest or oldest first; null
 * when a listed record carries no date it can be placed by. A count of 0 with records listed is an envelope not to
 * trust alone (a page past the end may say 0).
 */
async function readRange(
  client: PartnersClient,
  key: SyncKey,
  range: DatedRange,
  order: 'newest' | 'oldest',
  opts: CallOptions,
): Promise<Read | null> {
  const keyField = keyFieldFor(key.collection);
  const dir = order === 'newest' ? '-' : '';
  const page = await client.listPage(
    {
      collection: key.collection,
      limit: PROBE_RECORDS,
      depth: 0,
      sort: `${dir}updatedAt,${dir}${keyField}`,
      where: rangeWhere(range),
      select: SELECT_POSITION(keyField),
    },
    opts,
  );
  const route = `/partners/{version}/{tenant}/${key.collection}`;
  const records: Position[] = [];
  for (const doc of page.docs) {
    const p = positionOf(doc, keyField, route);
    if (!p) return null;
    records.push(p);
  }
  const total = records.length > 0 && page.totalDocs === 0 ? null : page.totalDocs;
  const whole = records.length === 0 || (total !== null && records.length >= total) || !hasMore(page, PROBE_RECORDS);
  return { records, total, cut: !whole };
}

/** The instant of the last record a read listed. */
const lastOf = (read: Read): string => (read.records[read.records.length - 1] as Position).updatedAt;

/**
 * The part of `range` a read of its newest records lists whole, with those records: from past the last instant
 * listed when the read was cut (the records at that instant may go on past the page).
 */
function listingOf(read: Read, range: DatedRange): Listing {
  if (!read.cut) return { range, records: read.records };
  const from = justAfter(lastOf(read));
  return {
    range: { from, before: range.before },
    records: read.records.filter((p) => Date.parse(p.updatedAt) >= Date.parse(from)),
  };
}

/**
 * One probe: the collection's newest records and its count in one `limit=100` read (`sort=-updatedAt`, only the
 * key and `updatedAt` selected, `depth=0`; never `limit=0`, which Payload reads as "no limit"). The read counts every
 * dated record and lists the newest, those dated in the future first; compared id by id with the mirror, they show
 * an edit or a create (a record the mirror lacks or holds older), a late commit, and the delete of any record
 * listed, future-dated ones included. The count of records dated up to now (`totalDocs` less the listed records
 * dated later) shows a delete anywhere. When 100 or more records are dated in the future, a second read lists the
 * newest dated up to now instead (the future-dated records are then left to the schedule's passes).
 * Records without a date are left out (`updatedAt exists`): an upstream on PostgreSQL sorts them first in
 * descending order, where they would hide the newest records; the schedule's passes keep them. An upstream that
 * lists an undated record anyway cannot be read this way: the probe then says "changed", and the collection's
 * incremental pass (one page when nothing changed) answers instead.
 */
export async function probe(
  client: PartnersClient,
  key: SyncKey,
  opts: CallOptions & { readonly now: number },
): Promise<ProbeReading> {
  const upTo = new Date(opts.now).toISOString();
  const unreadable = { upTo, total: null, listed: null };
  const all = await readRange(client, key, EVERY_DATED, 'newest', opts);
  if (!all) return unreadable;
  const later = all.records.filter((p) => Date.parse(p.updatedAt) > opts.now).length;
  // Every record dated after now is listed unless the listing was cut at a record dated after now.
  if (!all.cut || later < all.records.length)
    return {
      upTo,
      total: all.total === null ? null : all.total - later,
      listed: listingOf(all, EVERY_DATED),
    };
  const upToNow: DatedRange = { from: null, before: justAfter(upTo) };
  const past = await readRange(client, key, upToNow, 'newest', opts);
  if (!past) return unreadable;
  return { upTo, total: past.total, listed: listingOf(past, upToNow) };
}

/**
 * How the probe's listing differs from the mirror now. A row dated after the probe's instant and not listed may
 * have been committed since the probe (a record created meanwhile): it counts as gone only when dated past the
 * clock-skew allowance (a record dated in the future, deleted).
 */
export async function diffListing(
  rows: Pick<WatchStore, 'liveVersions'>,
  key: SyncKey,
  reading: ProbeReading & { readonly listed: Listing },
  now: number,
  skewMs: number,
): Promise<RangeDiff> {
  const d = diffRange(reading.listed.records, await rows.liveVersions(key, reading.listed.range));
  const upTo = Date.parse(reading.upTo);
  const maybeNewer = (at: string | null) => at !== null && Date.parse(at) > upTo && Date.parse(at) <= now + skewMs;
  return { stale: d.stale, gone: d.gone.filter((g) => !maybeNewer(g.updatedAt)) };
}

/** One range of the rotation: what it covered, whether it differs from the mirror, and where the next one starts. */
export interface RotationStep {
  readonly range: DatedRange;
  readonly differs: boolean;
  /** The next range's start; null: the rotation starts over from the collection's start. */
  readonly next: string | null;
}

/**
 * One range of the rotation over the records older than the probe's listing (`before`): up to 100 records from
 * `from` (null: the collection's start), oldest first, compared id by id with the mirror's rows in that range. A
 * late create and a delete that cancel in the count, both older than the listing, are found by the turn whose
 * range holds them. When 100 or more records share the range's first instant, that instant alone is the range, and
 * it is searched (read whole) at once.
 */
export async function rotate(
  client: PartnersClient,
  rows: Pick<WatchStore, 'liveVersions'>,
  key: SyncKey,
  from: string | null,
  before: string,
  opts: CallOptions,
): Promise<RotationStep> {
  const start = from !== null && Date.parse(from) < Date.parse(before) ? from : null;
  const read = await readRange(client, key, { from: start, before }, 'oldest', opts);
  if (!read) return { range: { from: start, before }, differs: true, next: null };
  if (!read.cut) {
    const range = { from: start, before };
    return { range, differs: differs(diffRange(read.records, await rows.liveVersions(key, range))), next: null };
  }
  const last = lastOf(read);
  if (start !== null && Date.parse(last) <= Date.parse(start)) {
    const range = { from: start, before: justAfter(last) };
    return { range, differs: true, next: range.before };
  }
  // Records at the last instant listed may go on past the page: they start the next range.
  const end = new Date(Date.parse(last)).toISOString();
  const range = { from: start, before: end };
  const listed = read.records.filter((p) => Date.parse(p.updatedAt) < Date.parse(end));
  return { range, differs: differs(diffRange(listed, await rows.liveVersions(key, range))), next: end };
}

/** The mirror's live dated published rows up to and including `upTo`. */
export const mirroredUpTo = (store: Pick<Store, 'countUpdatedBetween'>, key: SyncKey, upTo: string): Promise<number> =>
  store.countUpdatedBetween(key, DAWN, new Date(Date.parse(upTo)).toISOString());

/** What a watched collection's turn needs: the tenant's sync deps (its metered client), its routes and the rows. */
export interface TickDeps {
  readonly sync: SyncDeps;
  readonly rows: WatchStore;
  readonly target: TenantTarget;
  readonly routes: ReadRoutes;
  readonly signal: AbortSignal;
  /**
   * A difference the last search could not explain (a count gap from records without a date, say): not searched
   * again while the probe still reads the same.
   */
  readonly unexplained: string | null;
  /** Where the rotation's next range starts (the last turn's `rotation`); null or absent: the collection's start. */
  readonly rotation?: string | null;
  /**
   * A collection changing at every turn: its incremental pass alone answers (one page, which says whether anything
   * changed), without the probe; its count is compared at the next probe.
   */
  readonly passOnly?: boolean;
}

/** A turn's outcome, the count gap it could not explain (to skip next time), and its run's report when it ran one. */
export interface Tick {
  readonly outcome: TickOutcome;
  readonly unexplained: string | null;
  readonly report?: CollectionReport;
  /** Where the rotation goes on at the next turn. */
  readonly rotation: string | null;
  /**
   * Whether the probe left records unlisted, so that a probing turn reads a range of the rotation too (two reads
   * when quiet); absent when the turn did not probe.
   */
  readonly rotating?: boolean;
}

/** What a search may skip: the same count and the same differences as one it could not explain. */
const signatureOf = (total: number | null, head: RangeDiff | null): string | null =>
  total === null || head === null
    ? null
    : `${total}|${head.stale.map((p) => `${p.id}@${p.updatedAt}`).join(',')}|${head.gone.map((g) => g.id).join(',')}`;

/**
 * One turn of a watched collection: a probe, compared id by id with the mirror over the records it lists and by
 * count over the rest, and, when the probe did not list the whole collection, one range of the rotation over the
 * older records. When the upstream lists a record the mirror lacks or holds older, the collection's incremental
 * passes run at once (every variant). Then, for what still differs (a late commit the pass did not reach, a row
 * gone from a range compared, or a count that differs), a search (`findDeletions`): the ranges that differ read
 * whole, the count halved down to ranges that differ. The passes and the search run under the collection's lease
 * (fenced like every run); a collection another run holds is left to it, and probed again at the next turn.
 */
export async function tickCollection(deps: TickDeps, collection: CollectionSlug): Promise<Tick> {
  const rotationFrom = deps.rotation ?? null;
  if (deps.passOnly) return passAlone(deps, collection, rotationFrom);
  const key: SyncKey = { tenant: deps.target.slug, collection, variant: PUBLISHED };
  const clock = deps.sync.clock ?? systemClock;
  const opts = { signal: deps.signal };
  const reading = await probe(deps.sync.client, key, { ...opts, now: clock.now() });
  const skew = deps.sync.clockSkewMs ?? DEFAULT_CLOCK_SKEW_MS;
  const listed = reading.listed;
  const diffNow = () =>
    listed ? diffListing(deps.rows, key, { ...reading, listed }, clock.now(), skew) : Promise.resolve(null);
  const head = await diffNow();
  const olderFrom = listed?.range.from ?? null;
  const step = olderFrom ? await rotate(deps.sync.client, deps.rows, key, rotationFrom, olderFrom, opts) : null;
  const next = { rotation: step ? step.next : null, rotating: step !== null };
  const { total, upTo } = reading;
  const signature = signatureOf(total, head);
  const known = signature !== null && signature === deps.unexplained;
  // What the count compares: the upstream's records up to the probe's instant against the mirror's rows up to it.
  const gap = async () => (total !== null && !known ? (await mirroredUpTo(deps.sync.store, key, upTo)) - total : 0);
  const pass = (head === null || head.stale.length > 0) && !known;
  const headDiffers = head !== null && differs(head) && !known;
  if (!pass && !headDiffers && !step?.differs && (await gap()) === 0)
    return { outcome: 'quiet', unexplained: known ? deps.unexplained : null, ...next };
  let searched = false;
  let unexplained: string | null = null;
  const report = await syncCollection(deps.sync, deps.target, collection, 'incremental', deps.routes, deps.signal, {
    quietIfLocked: true,
    watched: {
      pass,
      after: async (run) => {
        const ranges: DatedRange[] = [];
        // What the pass did not bring: a late commit dated before its overlap window, a row gone from the listing.
        const again = listed && (pass || headDiffers) ? await diffNow() : null;
        if (listed && again && differs(again)) ranges.push(listed.range);
        if (step?.differs) ranges.push(step.range);
        if (ranges.length === 0 && (await gap()) === 0) return;
        searched = true;
        const found = await findDeletions(run, deps.rows, { ranges, upstream: known ? null : total, upTo });
        if (found.deleted + found.unpublished + found.upserted === 0) unexplained = signature;
      },
    },
  });
  if (report.skipped === LOCKED) return { outcome: 'locked', unexplained: deps.unexplained, rotation: rotationFrom };
  if (report.error) return { outcome: 'failed', unexplained: deps.unexplained, report, rotation: rotationFrom };
  const outcome = report.deleted > 0 ? 'deleted' : pass || (searched && !unexplained) ? 'changed' : 'quiet';
  return { outcome, unexplained, report, ...next };
}

/** A turn of a changing collection: its incremental pass alone (its first page says whether anything changed). */
async function passAlone(deps: TickDeps, collection: CollectionSlug, rotation: string | null): Promise<Tick> {
  const report = await syncCollection(deps.sync, deps.target, collection, 'incremental', deps.routes, deps.signal, {
    quietIfLocked: true,
    watched: { pass: true },
  });
  if (report.skipped === LOCKED) return { outcome: 'locked', unexplained: deps.unexplained, rotation };
  if (report.error) return { outcome: 'failed', unexplained: deps.unexplained, report, rotation };
  const outcome = report.inserted + report.updated + report.deleted > 0 ? 'changed' : 'quiet';
  return { outcome, unexplained: deps.unexplained, report, rotation };
}
