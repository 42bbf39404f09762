import { BadResponseError } from '../errors.js';
import { hasMore } from '../partners/list-envelope.js';
import type { CallOptions, ListPage, ListQuery, PartnersClient } from '../partners/partners-client.js';
import { docKey } from '../vocabulary/record-key.js';
import { afterWhere, comparePositions, keyFieldFor, laterOf, positionOf } from './position.js';
import type { CheckStore } from './self-check.js';
import type { Position, SyncKey } from './store-port.js';
import type { VariantSpec } from './variants.js';

/** Bounds the page-number walk over the records without a date (a listing that ignores `page` would never end). */
const MAX_UNDATED_PAGES = 1000;

/** A record both sides hold in different versions: the upstream's and the mirror's `updatedAt` (null: none). */
export interface StaleRecord {
  readonly id: string;
  readonly upstream: string | null;
  readonly mirror: string | null;
}

/** What the upstream and the mirror disagree on, for one collection and variant: every id, in id order. */
export interface IdComparison {
  /** Listed upstream, no live row in the mirror. */
  readonly missing: string[];
  /** A live row in the mirror, not listed upstream. */
  readonly extra: string[];
  readonly stale: StaleRecord[];
}

export interface CompareDeps {
  readonly client: PartnersClient;
  readonly checks: Pick<CheckStore, 'liveVersions'>;
  readonly opts: CallOptions;
  /** Records asked for per page (the upstream may clamp it). */
  readonly limit: number;
}

/** `updatedAt` as the mirror keeps it (UTC with milliseconds), or null when it is absent or not a date. */
const instantOf = (p: Position | null): string | null => (p ? new Date(Date.parse(p.updatedAt)).toISOString() : null);

const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The two sides' records not yet matched, by key and version. Matching happens per `updatedAt` window as the walk
 * goes, so only differences (and the records sharing the last instant read) are held, whatever the collection's size.
 */
class Unmatched {
  readonly upstream = new Map<string, string | null>();
  readonly mirror = new Map<string, string | null>();
  readonly stale: StaleRecord[] = [];

  /** Matches one window: the upstream's records in it against the mirror's live rows in it. */
  match(upstream: ReadonlyMap<string, string | null>, mirror: readonly { id: string; updatedAt: string | null }[]) {
    const left = new Map(upstream);
    for (const m of mirror) {
      if (!left.has(m.id)) {
        this.mirror.set(m.id, m.updatedAt);
        continue;
      }
      const u = left.get(m.id) ?? null;
      left.delete(m.id);
      if (u !== m.updatedAt) this.stale.push({ id: m.id, upstream: u, mirror: m.updatedAt });
    }
    for (const [id, at] of left) this.upstream.set(id, at);
  }
}

/**
 * Compares the ids and versions of one collection and variant, cheaply: the upstream is paged in `(updatedAt, key)`
 * order with the sync's keyset filters, asking only for `id`, `updatedAt` and the key field, at the largest page
 * size; each page's `updatedAt` window is then compared with the mirror's live rows in it (one query). Records
 * without a date sort apart: they are listed with `updatedAt exists=false` (only when the count says there are any)
 * and compared with the mirror's undated rows. Costs `ceil(n / page size)` requests (one more when the last page is
 * exactly full, or when some records have no date). `total` is the upstream's `totalDocs` for the variant.
 */
export async function compareIds(
  deps: CompareDeps,
  key: SyncKey,
  spec: VariantSpec,
  total: number,
): Promise<IdComparison> {
  const upstream = upstreamIds(deps, key, spec);
  const unmatched = new Unmatched();
  const dated = await compareDated(deps, key, upstream, unmatched);
  unmatched.match(new Map(), await deps.checks.liveVersions(key, { undated: true }));
  if (total > (dated ?? 0)) await readUndated(deps, upstream, unmatched);
  return reconcile(deps, key, unmatched);
}

/** How the comparison reads the upstream: lists of ids and versions, and each record's key. */
interface UpstreamIds {
  readonly keyField: string;
  readonly route: string;
  list(q: Partial<ListQuery>): Promise<ListPage>;
  keyOf(doc: Parameters<typeof docKey>[1]): string;
}

function upstreamIds(deps: CompareDeps, key: SyncKey, spec: VariantSpec): UpstreamIds {
  const collection = key.collection;
  const keyField = keyFieldFor(collection);
  const route = `/partners/{version}/{tenant}/${collection}`;
  const base: ListQuery = {
    ...spec.query,
    collection,
    limit: deps.limit,
    depth: 0,
    select: { id: true, updatedAt: true, [keyField]: true },
  };
  return {
    keyField,
    route,
    list: (q) => deps.client.listPage({ ...base, ...q }, deps.opts),
    keyOf: (doc) => {
      const k = docKey(collection, doc);
      if (k === null) throw new BadResponseError('GET', route, `a record has no ${keyField}`);
      return k;
    },
  };
}

/**
 * Walks the dated records in `(updatedAt, key)` order, matching each window read against the mirror's live rows in
 * it; records whose date does not parse go to the undated side. Returns the upstream's count of dated records.
 */
async function compareDated(
  deps: CompareDeps,
  key: SyncKey,
  upstream: UpstreamIds,
  unmatched: Unmatched,
): Promise<number | null> {
  const { keyField, route } = upstream;
  // Upstream records read but not yet compared: those at or after the window's end (the last instant read).
  let pending = new Map<string, string | null>();
  let from: string | null = null;
  const settle = async (before: string | null) => {
    // Nothing below `before` that is not compared yet: the page read only the last instant's records.
    if (before !== null && from !== null && before <= from) return;
    const window = new Map<string, string | null>();
    const rest = new Map<string, string | null>();
    for (const [id, at] of pending) (before === null || (at !== null && at < before) ? window : rest).set(id, at);
    pending = rest;
    unmatched.match(window, await deps.checks.liveVersions(key, { from, before }));
    from = before;
  };

  let after: Position | null = null;
  let pageNo = 1;
  let dated: number | null = null;
  const sort = `updatedAt,${keyField}`;
  for (;;) {
    const where = after ? afterWhere(after, keyField) : { updatedAt: { exists: true } };
    const page = await upstream.list({ where, sort, page: pageNo });
    dated ??= page.totalDocs;
    let last: Position | null = null;
    for (const doc of page.docs) {
      const p = positionOf(doc, keyField, route);
      const at = instantOf(p);
      // A value that is not a date is mirrored as undated: compared with the undated rows.
      (at === null ? unmatched.upstream : pending).set(upstream.keyOf(doc), at);
      last = laterOf(last, p);
    }
    if (!(page.docs.length > 0 && hasMore(page, deps.limit))) break;
    if (last && (!after || comparePositions(last, after) > 0)) {
      after = last;
      pageNo = 1;
      await settle(instantOf(last));
    } else pageNo++;
  }
  await settle(null);
  return dated;
}

/** Lists the records without a date (by page number, bounded) onto the upstream's unmatched side. */
async function readUndated(deps: CompareDeps, upstream: UpstreamIds, unmatched: Unmatched): Promise<void> {
  for (let n = 1; n <= MAX_UNDATED_PAGES; n++) {
    const page = await upstream.list({ where: { updatedAt: { exists: false } }, sort: upstream.keyField, page: n });
    for (const doc of page.docs) unmatched.upstream.set(upstream.keyOf(doc), null);
    if (!hasMore(page, deps.limit)) break;
  }
}

/**
 * Pairs what each side holds unmatched: a key on both is a record whose version moved between windows (stale).
 * An upstream key left is looked up in the mirror by id (a record edited while the walk ran is listed twice).
 */
async function reconcile(deps: CompareDeps, key: SyncKey, u: Unmatched): Promise<IdComparison> {
  // By id: a record listed twice (edited while the walk ran) is named once, with its latest upstream version.
  const stale = new Map(u.stale.map((s) => [s.id, s]));
  const differ = (id: string, upstream: string | null, mirror: string | null) => {
    if (upstream !== mirror) stale.set(id, { id, upstream, mirror });
  };
  for (const [id, at] of u.upstream) {
    if (!u.mirror.has(id)) continue;
    differ(id, at, u.mirror.get(id) ?? null);
    u.mirror.delete(id);
    u.upstream.delete(id);
  }
  for (const m of await deps.checks.liveVersions(key, { ids: [...u.upstream.keys()] })) {
    differ(m.id, u.upstream.get(m.id) ?? null, m.updatedAt);
    u.upstream.delete(m.id);
  }
  return {
    missing: [...u.upstream.keys()].sort(byId),
    extra: [...u.mirror.keys()].sort(byId),
    stale: [...stale.values()].sort((a, b) => byId(a.id, b.id)),
  };
}
