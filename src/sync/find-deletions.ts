import { hasMore } from '../partners/list-envelope.js';
import type { ListPage, Where } from '../partners/partners-client.js';
import { VERSIONED } from '../vocabulary/collections.js';
import type { UpstreamDoc } from '../vocabulary/ids.js';
import { docKey } from '../vocabulary/record-key.js';
import { type DatedRange, justAfter, rangeWhere } from './dated-range.js';
import { keyFieldFor } from './position.js';
import type { RowVersion } from './self-check.js';
import { PUBLISHED, type SyncKey } from './store-port.js';
import type { Run } from './sync-run.js';
import type { WatchStore } from './watch-port.js';

/** A range read whole once neither side holds more records than this: one page at the sync's largest clamp. */
const LEAF_RECORDS = 100;
/** Bounds the pages of a leaf (a burst of more than 100 records sharing one instant is read by page number). */
const MAX_LEAF_PAGES = 50;

/** What a search found and did: rows tombstoned (gone, or unpublished) and records the mirror lacked, upserted. */
export interface SearchResult {
  readonly deleted: number;
  readonly unpublished: number;
  readonly upserted: number;
}

const instant = (at: string): number => Date.parse(at);

/** One search over one collection's published rows, inside its run (lease, fence, request count). */
class Search {
  readonly key: SyncKey;
  readonly keyField: string;
  /** Mirror rows the upstream's range no longer lists: gone, unpublished, or moved by an edit (checked by id). */
  readonly candidates: string[] = [];
  /** Upstream records the mirror lacks or holds in another version. */
  readonly fresh: UpstreamDoc[] = [];

  constructor(
    readonly run: Run,
    readonly rows: WatchStore,
  ) {
    this.key = run.key(PUBLISHED);
    this.keyField = keyFieldFor(run.collection);
  }

  private async list(where: Where, limit: number, page = 1): Promise<ListPage> {
    return this.run.listPage({}, page, limit, `updatedAt,${this.keyField}`, where);
  }

  /** The upstream's count of records in `r` (one `limit=1` read). */
  private async count(r: DatedRange): Promise<number> {
    return (await this.list(rangeWhere(r), 1)).totalDocs;
  }

  /**
   * Narrows `r` (the mirror's rows `mine`, the upstream's `upstream` records) to the ranges whose counts differ,
   * halving by the mirror's rows: one count per step, the other half's count by difference.
   */
  async narrow(r: DatedRange, mine: readonly RowVersion[], upstream: number): Promise<void> {
    this.run.checkStop();
    if (mine.length === upstream) return;
    if (Math.max(mine.length, upstream) <= LEAF_RECORDS) return this.leaf(r, mine);
    const split = splitPoint(mine);
    if (split === null) return this.leaf(r, mine);
    const left: DatedRange = { from: r.from, before: split };
    const right: DatedRange = { from: split, before: r.before };
    const leftUp = await this.count(left);
    const leftMine = mine.filter((m) => instant(m.updatedAt as string) < instant(split));
    const rightMine = mine.filter((m) => instant(m.updatedAt as string) >= instant(split));
    await this.narrow(left, leftMine, leftUp);
    await this.narrow(right, rightMine, upstream - leftUp);
  }

  /** Reads a range whole and compares it record by record with the mirror's rows in it. */
  async leaf(r: DatedRange, mine: readonly RowVersion[]): Promise<void> {
    const listed = new Map<string, UpstreamDoc>();
    for (let page = 1; page <= MAX_LEAF_PAGES; page++) {
      const got = await this.list(rangeWhere(r), LEAF_RECORDS, page);
      for (const d of got.docs) {
        const id = docKey(this.run.collection, d);
        if (id !== null) listed.set(id, d);
      }
      if (!hasMore(got, LEAF_RECORDS) || got.docs.length === 0) break;
    }
    const versions = new Map(mine.map((m) => [m.id, m.updatedAt]));
    for (const m of mine) if (!listed.has(m.id)) this.candidates.push(m.id);
    for (const [id, d] of listed) {
      const have = versions.get(id);
      if (have === undefined || have === null || instant(have) !== instant(String(d.updatedAt))) this.fresh.push(d);
    }
  }

  /**
   * Sorts the candidates by one look-up per 100 ids (`draft=true` on versioned collections, which lists drafts too):
   * those listed no more are gone; those listed as published have moved (edited since: their record is upserted);
   * on a versioned collection, those listed only as drafts are asked again in published reads, once: listed there,
   * they moved (a published record with a newer draft), else they are unpublished.
   */
  async sort(): Promise<{ moved: UpstreamDoc[]; gone: string[]; unpublished: string[] }> {
    const versioned = VERSIONED.has(this.run.collection);
    const latest = await this.lookUp(this.candidates, versioned);
    const listed = new Map(latest.map((d) => [docKey(this.run.collection, d), d]));
    const gone = this.candidates.filter((id) => !listed.has(id));
    const moved = latest.filter((d) => !versioned || d._status !== 'draft');
    const draftsOnly = latest
      .filter((d) => versioned && d._status === 'draft')
      .map((d) => docKey(this.run.collection, d));
    const published = draftsOnly.length > 0 ? await this.lookUp(draftsOnly as string[], false) : [];
    const stillPublished = new Set(published.map((d) => docKey(this.run.collection, d)));
    moved.push(...published);
    return { moved, gone, unpublished: (draftsOnly as string[]).filter((id) => !stillPublished.has(id)) };
  }

  /** The records of `ids` the upstream lists (with `draft`, their latest version, drafts included). */
  private async lookUp(ids: readonly string[], draft: boolean): Promise<UpstreamDoc[]> {
    const found: UpstreamDoc[] = [];
    for (let i = 0; i < ids.length; i += LEAF_RECORDS) {
      const batch = ids.slice(i, i + LEAF_RECORDS);
      const where = { [this.keyField]: { in: batch } };
      const page = await this.run.listPage(draft ? { draft: true } : {}, 1, batch.length, this.keyField, where);
      found.push(...page.docs);
    }
    return found;
  }
}

/**
 * Where to halve a range: the `updatedAt` of its middle mirror row, moved on to the next distinct instant when the
 * rows before it share it; null when every row shares one instant (the range is then read whole).
 */
function splitPoint(mine: readonly RowVersion[]): string | null {
  const sorted = [...mine].sort((a, b) => instant(a.updatedAt as string) - instant(b.updatedAt as string));
  const first = instant(sorted[0]?.updatedAt as string);
  for (let i = Math.floor(sorted.length / 2); i < sorted.length; i++) {
    const at = instant(sorted[i]?.updatedAt as string);
    if (at > first) return new Date(at).toISOString();
  }
  return null;
}

/** What a search is asked to look at. */
export interface SearchPlan {
  /**
   * Ranges known to differ (a probe or the rotation compared them id by id): each read whole and compared record by
   * record, before any counting.
   */
  readonly ranges: readonly DatedRange[];
  /** The upstream's count of the records dated up to `upTo` (inclusive), or null: no search by counting. */
  readonly upstream: number | null;
  readonly upTo: string;
}

const NOTHING: SearchResult = { deleted: 0, unpublished: 0, upserted: 0 };

const sum = (a: SearchResult, b: SearchResult): SearchResult => ({
  deleted: a.deleted + b.deleted,
  unpublished: a.unpublished + b.unpublished,
  upserted: a.upserted + b.upserted,
});

/**
 * What a search found, committed: the records the mirror lacked and those that moved upserted, the rows gone
 * tombstoned (`unpublished` when they exist upstream as drafts, else `deleted`).
 */
async function settle(run: Run, search: Search): Promise<SearchResult> {
  const { moved, gone, unpublished } =
    search.candidates.length > 0 ? await search.sort() : { moved: [], gone: [], unpublished: [] };
  const upserts = [...search.fresh, ...moved];
  let upserted = 0;
  if (upserts.length > 0) {
    const r = await run.commit(search.key, { upserts });
    upserted = r.inserted + r.updated + r.revived;
    run.counted(r, upserts.length);
  }
  const deleted = gone.length > 0 ? (await run.commit(search.key, { deletes: gone })).deleted : 0;
  const unpublishedCount =
    unpublished.length > 0
      ? (await run.commit(search.key, { deletes: unpublished, deleteReason: 'unpublished' })).deleted
      : 0;
  run.report.deleted += deleted + unpublishedCount;
  if (unpublishedCount > 0) run.report.unpublished = (run.report.unpublished ?? 0) + unpublishedCount;
  return { deleted, unpublished: unpublishedCount, upserted };
}

/**
 * Finds the published records of the run's collection that the mirror holds and the upstream no longer lists, and
 * tombstones them: `unpublished` when they exist upstream as drafts, else `deleted`. First the `ranges` known to
 * differ are read whole and compared record by record (a late create and a delete that cancel in the count are
 * found so). Then, when `upstream` is given, the records dated up to `upTo` are searched by counting: a hard delete
 * is invisible to `updatedAt`, and reading the whole collection costs a request per page; instead the upstream's
 * count of the range is compared with the mirror's and the range halved (by the mirror's rows) down to ranges of at
 * most 100 records that differ, about log2(n / 100) counts, then those read whole. A mirror row missing from its
 * range is looked up by id before it is tombstoned (one read per 100): one edited since has moved, not gone, and
 * its record is upserted (as are records the mirror lacked in the ranges read). `upstream` is the probe's count: a
 * pass since may have moved a few, which the search then finds moved. Runs under the run's lease; every commit is
 * fenced by it.
 */
export async function findDeletions(run: Run, rows: WatchStore, plan: SearchPlan): Promise<SearchResult> {
  let found = NOTHING;
  if (plan.ranges.length > 0) {
    const search = new Search(run, rows);
    for (const r of plan.ranges) await search.leaf(r, await rows.liveVersions(search.key, r));
    found = await settle(run, search);
  }
  if (plan.upstream === null) return found;
  const search = new Search(run, rows);
  const whole: DatedRange = { from: null, before: justAfter(plan.upTo) };
  const mine = await rows.liveVersions(search.key, whole);
  if (mine.length === plan.upstream) return found;
  await search.narrow(whole, mine, plan.upstream);
  return sum(found, await settle(run, search));
}
