import type { CallOptions, PartnersClient } from '../partners/partners-client.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import { docKey } from '../vocabulary/record-key.js';
import type { ReadRoutes } from './discover-routes.js';
import { findDeletions } from './find-deletions.js';
import { keyFieldFor, positionOf } from './position.js';
import { type Position, PUBLISHED, type Store, type SyncKey } from './store-port.js';
import { type CollectionReport, LOCKED, type SyncDeps, syncCollection, type TenantTarget } from './sync-collection.js';
import type { WatchStore } from './watch-port.js';

/** What one probe of a collection found: the upstream's newest record and count, against the mirror. */
export interface ProbeReading {
  /** The upstream's dated published records (`totalDocs`), or null when its answer could not say. */
  readonly total: number | null;
  /** The newest dated record's position, or null when the collection has none. */
  readonly newest: Position | null;
  /** Whether the mirror holds the newest record in that version. */
  readonly newestMirrored: boolean;
}

/** How a watched collection's turn ended: nothing new, a change mirrored, rows found gone, held, or a failure. */
export type TickOutcome = 'quiet' | 'changed' | 'deleted' | 'locked' | 'failed';

/** The earliest and latest instants a mirror row can carry: the mirror's rows in between are its dated ones. */
const DAWN = '0001-01-01T00:00:00.000Z';

/**
 * One probe: the collection's newest dated record and its count in one `limit=1` read (`sort=-updatedAt`, only the
 * key and `updatedAt` selected, `depth=0`; never `limit=0`, which Payload reads as "no limit"). Records without a
 * date are left out (`updatedAt exists`): an upstream on PostgreSQL sorts them first in descending order, where
 * they would hide the newest record; the schedule's passes keep them.
 */
export async function probe(
  client: PartnersClient,
  rows: Pick<WatchStore, 'liveVersions'>,
  key: SyncKey,
  opts: CallOptions,
): Promise<ProbeReading> {
  const keyField = keyFieldFor(key.collection);
  const page = await client.listPage(
    {
      collection: key.collection,
      limit: 1,
      depth: 0,
      sort: `-updatedAt,-${keyField}`,
      where: { updatedAt: { exists: true } },
      select: { [keyField]: true, updatedAt: true },
    },
    opts,
  );
  const doc = page.docs[0];
  const route = `/partners/{version}/{tenant}/${key.collection}`;
  const newest = doc ? positionOf(doc, keyField, route) : null;
  // A listed record with a count of 0 is an envelope not to trust alone (a page past the end may say 0).
  const total = doc && page.totalDocs === 0 ? null : page.totalDocs;
  if (!newest) return { total, newest: null, newestMirrored: true };
  const id = doc ? (docKey(key.collection, doc) ?? newest.id) : newest.id;
  const [mine] = await rows.liveVersions(key, { ids: [id] });
  const newestMirrored =
    mine !== undefined && mine.updatedAt !== null && Date.parse(mine.updatedAt) === Date.parse(newest.updatedAt);
  return { total, newest, newestMirrored };
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
  const key: SyncKey = { tenant: deps.target.slug, collection, variant: PUBLISHED };
  const opts: CallOptions = { signal: deps.signal };
  const reading = await probe(deps.sync.client, deps.rows, key, opts);
  const { newest, total } = reading;
  const signature = newest && total !== null ? `${total}@${newest.updatedAt}` : null;
  const gap = async () =>
    newest && total !== null ? (await mirroredUpTo(deps.sync.store, key, newest.updatedAt)) - total : 0;
  const pass = !reading.newestMirrored;
  if (!pass && ((await gap()) === 0 || signature === deps.unexplained)) return { outcome: 'quiet', unexplained: null };
  let searched = false;
  let unexplained: string | null = null;
  const report = await syncCollection(deps.sync, deps.target, collection, 'incremental', deps.routes, deps.signal, {
    quietIfLocked: true,
    watched: {
      pass,
      after: async (run) => {
        if (!newest || total === null || (await gap()) === 0) return;
        if (signature === deps.unexplained) return;
        searched = true;
        const found = await findDeletions(run, deps.rows, newest.updatedAt, total);
        if (found.deleted + found.unpublished + found.upserted === 0) unexplained = signature;
      },
    },
  });
  if (report.skipped === LOCKED) return { outcome: 'locked', unexplained: deps.unexplained };
  if (report.error) return { outcome: 'failed', unexplained: deps.unexplained, report };
  const outcome = report.deleted > 0 ? 'deleted' : pass || (searched && !unexplained) ? 'changed' : 'quiet';
  return { outcome, unexplained, report };
}
