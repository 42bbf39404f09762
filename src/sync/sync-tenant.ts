import { randomUUID } from 'node:crypto';
import { UnderstudyError } from '../errors.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import { discoverRoutes, type ReadRoutes } from './discover-routes.js';
import { reachability } from './reachability.js';
import { edgesTo } from './references.js';
import {
  type CollectionReport,
  LOCKED,
  type SyncDeps,
  type SyncMode,
  syncCollection,
  type TenantTarget,
} from './sync-collection.js';
import { wantedCollections } from './wanted-collections.js';

export interface TenantReport {
  slug: string;
  collections: CollectionReport[];
}

const REACH_ORDER = { list: 0, embedded: 1, get: 2, none: 3 } as const;

/**
 * The order collections sync in: listable ones first, then those taken populated from them, then those fetched by
 * id, which need every mirrored record that may point at them.
 */
export function syncOrder(collections: readonly CollectionSlug[], routes: ReadRoutes): CollectionSlug[] {
  const reach = reachability(routes);
  const rank = (c: CollectionSlug) => REACH_ORDER[reach.get(c)?.how ?? 'none'];
  return [...collections].sort((a, b) => rank(a) - rank(b));
}

/**
 * The collections whose mirrored records `c` is reached through, when it has no list route: the listable parent
 * embedding it, or the listed and embedded collections referencing it. Only lower ranks, so never a cycle.
 */
export function prerequisitesOf(c: CollectionSlug, routes: ReadRoutes): CollectionSlug[] {
  const reach = reachability(routes);
  const mine = reach.get(c);
  if (!mine || mine.how === 'list' || mine.how === 'none') return [];
  if (mine.how === 'embedded') return [mine.from];
  const rank = REACH_ORDER.get;
  return [...new Set(edgesTo(c).map((e) => e.from))].filter(
    (f) => f !== c && REACH_ORDER[reach.get(f)?.how ?? 'none'] < rank,
  );
}

/**
 * Mirrors every configured collection of one tenant. A refused key (US_AUTH), an upstream that cannot be reached
 * at all (no answer after the retries: the next collections would only learn the same, each after its own
 * retries) or an abort stops the whole run and is thrown; any other failure is reported on its collection and the
 * rest carry on. Collections are added to
 * `report` as they finish, so a caller passing its own keeps what was done when the run is stopped.
 */
export async function syncTenant(
  deps: SyncDeps,
  target: TenantTarget,
  mode: SyncMode,
  signal: AbortSignal,
  known?: ReadRoutes,
  report: TenantReport = { slug: target.slug, collections: [] },
): Promise<TenantReport> {
  const log = deps.log.child({ tenant: target.slug });
  const routes = known ?? (await discoverRoutes(deps.client, { signal }));
  log.debug({ source: routes.source, list: [...routes.list], get: [...routes.get] }, 'routes discovered');
  const wanted = wantedCollections(target);
  const run = { ...deps, runId: deps.runId ?? randomUUID() };
  // Report in the order the user knows them, not the order they ran in; kept so after every collection, since
  // `report` (the caller's, when given) still tells what was done if a refused key or an abort ends the run.
  const push = (r: CollectionReport) => {
    report.collections.push(r);
    report.collections.sort((a, b) => wanted.indexOf(a.name) - wanted.indexOf(b.name));
  };
  // A collection another run holds is tried again once the others are done (that run may have finished it by
  // then); only one still held at the end is reported skipped, "locked by another run".
  const held: CollectionSlug[] = [];
  for (const c of syncOrder(wanted, routes)) {
    if (signal.aborted || deps.stop?.aborted) throw new UnderstudyError('US_ABORTED', 'sync stopped');
    const r = await syncCollection(run, target, c, mode, routes, signal, {
      quietIfLocked: true,
      throwUnreachable: true,
    });
    if (r.skipped === LOCKED) held.push(c);
    else push(r);
  }
  for (const c of held) {
    if (signal.aborted || deps.stop?.aborted) throw new UnderstudyError('US_ABORTED', 'sync stopped');
    push(await syncCollection(run, target, c, mode, routes, signal, { throwUnreachable: true }));
  }
  return report;
}
