import type { CallOptions, PartnersClient } from '../partners/partners-client.js';
import { systemClock } from '../vocabulary/clock.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import type { ReadRoutes } from './discover-routes.js';
import { findDeletions } from './find-deletions.js';
import { keyFieldFor, positionOf } from './position.js';
import { type Position, PUBLISHED, type Store, type SyncKey } from './store-port.js';
import { type CollectionReport, LOCKED, type SyncDeps, syncCollection, type TenantTarget } from './sync-collection.js';
import type { WatchStore } from './watch-port.js';

/** What one probe of a collection found: the upstream's newest record and count up to an instant, against the mirror. */
export interface ProbeReading {
  /** The instant the probe counted up to (ISO): records dated later (ahead of this clock) wait for it to pass. */
  readonly upTo: string;
  /** The upstream's published records dated up to `upTo` (`totalDocs`), or null when its answer could not say. */
  readonly total: number | null;
  /** The newest dated record's position, or null when the collection has none up to `upTo`. */
  readonly newest: Position | null;
  /** Whether the mirror holds the newest record in that version (true when there is none). */
  readonly newestMirrored: boolean;
}

/** How a watched collection's turn ended: nothing new, a change mirrored, rows found gone, held, or a failure. */
export type TickOutcome = 'quiet' | 'changed' | 'deleted' | 'locked' | 'failed';

/** The earliest instant a mirror row can carry: the mirror's rows from it on are its dated ones. */
const DAWN = '0001-01-01T00:00:00.000Z';

/**
 * One probe: the collection's newest record and its count in one `limit=1` read (`sort=-updatedAt`, only the key
 * and `updatedAt` selected, `depth=0`; never `limit=0`, which Payload reads as "no limit"), counting only records
 * dated up to now:
 * - a record dated in the future would otherwise stay the newest until its date, hiding every edit made meanwhile;
 *   it is read once its date has passed (the schedule's passes read it at once);
 * - records without a date are left out (`updatedAt exists`): an upstream on PostgreSQL sorts them first in
 *   descending order, where they would hide the newest record; the schedule's passes keep them.
 * An upstream that lists an undated record first anyway cannot be read this way: the probe then says "changed",
 * and the collection's incremental pass (one page when nothing changed) answers instead.
 */
export async function probe(
  client: PartnersClient,
  rows: Pick<WatchStore, 'liveVersions'>,
  key: SyncKey,
  opts: CallOptions & { readonly now: number },
): Promise<ProbeReading> {
  const keyField = keyFieldFor(key.collection);
  const upTo = new Date(opts.now).toISOString();
  const page = await client.listPage(
    {
      collection: key.collection,
      limit: 1,
      depth: 0,
      sort: `-updatedAt,-${keyField}`,
      where: { and: [{ updatedAt: { exists: true } }, { updatedAt: { less_than_equal: upTo } }] },
      select: { [keyField]: true, updatedAt: true },
    },
    opts,
  );
  const doc = page.docs[0];
  const route = `/partners/{version}/{tenant}/${key.collection}`;
  const newest = doc ? positionOf(doc, keyField, route) : null;
  // A listed record with a count of 0 is an envelope not to trust alone (a page past the end may say 0).
  const total = doc && page.totalDocs === 0 ? null : page.totalDocs;
  if (doc && !newest) return { upTo, total: null, newest: null, newestMirrored: false };
  if (!newest) return { upTo, total, newest: null, newestMirrored: true };
  // The position's id is the record's key as the mirror stores it (its id, or a medium's filename).
  const [mine] = await rows.liveVersions(key, { ids: [newest.id] });
  const newestMirrored =
    mine !== undefined && mine.updatedAt !== null && Date.parse(mine.updatedAt) === Date.parse(newest.updatedAt);
  return { upTo, total, newest, newestMirrored };
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
   * A count gap the last search could not explain (records without a date, say): not searched again while the
   * probe and the mirror still read the same.
   */
  readonly unexplained: string | null;
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
}

/**
 * One turn of a watched collection: a probe; when the upstream's newest record is not mirrored, the collection's
 * incremental passes at once (every variant); when, after that, the mirror counts a different number of rows up to
 * the newest record's instant than the upstream lists, a search by counting for the rows gone (`findDeletions`).
 * The passes and the search run under the collection's lease (fenced like every run); a collection another run
 * holds is left to it, and probed again at the next turn.
 */
export async function tickCollection(deps: TickDeps, collection: CollectionSlug): Promise<Tick> {
  if (deps.passOnly) return passAlone(deps, collection);
  const key: SyncKey = { tenant: deps.target.slug, collection, variant: PUBLISHED };
  const clock = deps.sync.clock ?? systemClock;
  const reading = await probe(deps.sync.client, deps.rows, key, { signal: deps.signal, now: clock.now() });
  const { total, upTo } = reading;
  // What the count compares: the upstream's records up to the probe's instant against the mirror's rows up to it.
  const signature = total !== null ? `${total}@${reading.newest?.updatedAt ?? ''}` : null;
  const gap = async () => (total !== null ? (await mirroredUpTo(deps.sync.store, key, upTo)) - total : 0);
  const pass = !reading.newestMirrored;
  if (!pass && ((await gap()) === 0 || signature === deps.unexplained)) return { outcome: 'quiet', unexplained: null };
  let searched = false;
  let unexplained: string | null = null;
  const report = await syncCollection(deps.sync, deps.target, collection, 'incremental', deps.routes, deps.signal, {
    quietIfLocked: true,
    watched: {
      pass,
      after: async (run) => {
        if (total === null || signature === deps.unexplained || (await gap()) === 0) return;
        searched = true;
        const found = await findDeletions(run, deps.rows, upTo, total);
        if (found.deleted + found.unpublished + found.upserted === 0) unexplained = signature;
      },
    },
  });
  if (report.skipped === LOCKED) return { outcome: 'locked', unexplained: deps.unexplained };
  if (report.error) return { outcome: 'failed', unexplained: deps.unexplained, report };
  const outcome = report.deleted > 0 ? 'deleted' : pass || (searched && !unexplained) ? 'changed' : 'quiet';
  return { outcome, unexplained, report };
}

/** A turn of a changing collection: its incremental pass alone (its first page says whether anything changed). */
async function passAlone(deps: TickDeps, collection: CollectionSlug): Promise<Tick> {
  const report = await syncCollection(deps.sync, deps.target, collection, 'incremental', deps.routes, deps.signal, {
    quietIfLocked: true,
    watched: { pass: true },
  });
  if (report.skipped === LOCKED) return { outcome: 'locked', unexplained: deps.unexplained };
  if (report.error) return { outcome: 'failed', unexplained: deps.unexplained, report };
  const outcome = report.inserted + report.updated + report.deleted > 0 ? 'changed' : 'quiet';
  return { outcome, unexplained: deps.unexplained, report };
}
