import { describeError, LeaseLostError, UnderstudyError } from '../errors.js';
import { type CollectionSlug, THEME_SCHEMA_COLLECTIONS } from '../vocabulary/collections.js';
import { DEFAULT_LEASE_TTL_MS, keepLease, leaseHolder, takeLease } from './collection-lease.js';
import type { ReadRoutes } from './discover-routes.js';
import { syncListed } from './list-pass.js';
import { reachOf } from './reachability.js';
import { type Lease, PUBLISHED } from './store-port.js';
import { syncByReference } from './sync-by-reference.js';
import { syncEmbedded } from './sync-embedded.js';
import { type CollectionReport, Run, type SyncDeps, type SyncMode, type TenantTarget } from './sync-run.js';
import { variantsFor } from './variants.js';

/** What a collection held by another live run is reported as (`skipped`), in `--json` and the table. */
export const LOCKED = 'locked by another run';

export type { CollectionReport, SyncDeps, SyncMode, TenantTarget } from './sync-run.js';

/** Mirrors a collection's theme-settings schema when the upstream serves one. */
async function syncThemeSchema(run: Run): Promise<void> {
  if (!THEME_SCHEMA_COLLECTIONS.includes(run.collection)) return;
  try {
    const schema = await run.deps.client.themeSettingsSchema(run.collection, run.opts);
    await run.deps.store.saveThemeSchema(run.tenant, run.collection, schema, run.now());
  } catch (err) {
    if (err instanceof UnderstudyError && (err.code === 'US_AUTH' || err.code === 'US_ABORTED')) throw err;
    run.deps.log.warn({ collection: run.collection, err: describeError(err) }, 'theme-settings schema not mirrored');
  }
}

/**
 * Mirrors one collection of one tenant (every configured variant). Commits page by page, so an interrupted run
 * resumes where it stopped. Throws for a refused key or an abort; other failures land in the report's `error`.
 */
export async function syncCollection(
  deps: SyncDeps,
  target: TenantTarget,
  collection: CollectionSlug,
  mode: SyncMode,
  routes: ReadRoutes,
  signal: AbortSignal,
  opts: {
    /**
     * A first try: when another run holds the collection, return at once (no wait, nothing logged or recorded),
     * the caller trying again later.
     */
    readonly quietIfLocked?: boolean;
  } = {},
): Promise<CollectionReport> {
  const started = Date.now();
  // Lost lease: the request in flight is dropped at once (nothing of it could be committed anyway).
  const fenced = new AbortController();
  const run = new Run(deps, target.slug, collection, AbortSignal.any([signal, fenced.signal]));
  const log = deps.log.child({ tenant: target.slug, collection });
  const reach = reachOf(collection, routes);
  const startedAt = run.startedAt;
  let failure: unknown = null;
  let lease: Lease | null = null;
  let locked = false;
  if (reach.how === 'none') {
    run.report.skipped = reach.reason;
  } else {
    try {
      lease = await takeLease(
        deps.store,
        { tenant: target.slug, collection },
        {
          holder: leaseHolder(),
          ttlMs: deps.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS,
          waitMs: opts.quietIfLocked ? 0 : (deps.waitMs ?? 0),
          clock: run.clock,
          signal,
        },
      );
    } catch (err) {
      failure = err;
    }
    if (!lease && !failure) {
      locked = true;
      run.report.skipped = LOCKED;
      run.report.errorCode = 'US_LOCKED';
      if (opts.quietIfLocked) return run.report;
    }
  }
  if (lease) {
    run.lease = lease;
    let lost = false;
    const keeper = keepLease(deps.store, lease, () => {
      lost = true;
      fenced.abort();
    });
    try {
      for (const spec of variantsFor(target, collection)) {
        if (reach.how === 'list') await syncListed(run, spec, mode);
        else if (reach.how === 'get') await syncByReference(run, spec, mode);
        else if (reach.how === 'embedded') await syncEmbedded(run, spec, mode, reach.from);
      }
      await syncThemeSchema(run);
    } catch (err) {
      failure = err;
    }
    await keeper.stop();
    if (lost && !(failure instanceof UnderstudyError && failure.code === 'US_LEASE_LOST'))
      failure = new LeaseLostError(lease);
  }
  run.report.ms = Date.now() - started;
  if (run.report.future > 0) {
    const futureAfter = new Date(run.futureAfter).toISOString();
    log.warn({ future: run.report.future, ids: run.futureIds, futureAfter }, 'records dated in the future');
  }
  // A graceful stop is not a failure: committed pages stay, the next run resumes, and status shows no error.
  const stopped = failure instanceof UnderstudyError && failure.code === 'US_ABORTED';
  const code = failure instanceof UnderstudyError ? failure.code : undefined;
  if (failure) {
    run.report.error = describeError(failure);
    if (code) run.report.errorCode = code;
  }
  const fencedOff = failure instanceof UnderstudyError && failure.code === 'US_LEASE_LOST';
  if (failure && !stopped && !fencedOff && lease) {
    // Fenced like every commit: a run that lost its lease leaves the state to the run that took it.
    const key = run.key(PUBLISHED);
    const state = await deps.store.getSyncState(key);
    await run.saveState(key, { ...state, lastError: run.report.error ?? null }).catch(() => undefined);
  }
  // Last, after the fenced commits (each renews the lease); a lease that changed hands is not ours to end.
  if (lease && !fencedOff) await deps.store.releaseLease(lease).catch(() => undefined);
  await deps.store.recordRun({
    runId: run.runId,
    tenant: target.slug,
    collection,
    variant: variantsFor(target, collection)
      .map((v) => v.variant)
      .join(','),
    mode,
    startedAt,
    finishedAt: run.now(),
    status: stopped ? 'stopped' : failure ? 'failed' : reach.how === 'none' || locked ? 'skipped' : 'ok',
    fetched: run.report.fetched,
    inserted: run.report.inserted,
    updated: run.report.updated,
    unchanged: run.report.unchanged,
    deleted: run.report.deleted,
    requests: run.report.requests,
    ms: run.report.ms,
    error: run.report.error ?? run.report.skipped ?? null,
  });
  // `name` is the `collection` the child logger already binds: one field, one name.
  const { errorCode: _omit, name: _name, ...outcome } = run.report;
  if (stopped) log.info(outcome, 'sync stopped');
  else if (failure) log.error({ ...outcome, code }, 'sync failed');
  else log.info(outcome, reach.how === 'none' || locked ? 'sync skipped' : 'sync finished');
  if (failure instanceof UnderstudyError && (failure.code === 'US_AUTH' || failure.code === 'US_ABORTED'))
    throw failure;
  return run.report;
}
