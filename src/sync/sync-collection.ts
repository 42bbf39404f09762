import { codeOf, describeError, hasCode, isStop, isUpstreamError, LeaseLostError } from '../errors.js';
import type { Logger } from '../log.js';
import { type CollectionSlug, THEME_SCHEMA_COLLECTIONS } from '../vocabulary/collections.js';
import { DEFAULT_LEASE_TTL_MS, keepLease, leaseHolder, takeLease } from './collection-lease.js';
import type { ReadRoutes } from './discover-routes.js';
import { syncListed } from './list-pass.js';
import { type Reach, reachOf } from './reachability.js';
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
    if (hasCode(err, 'US_AUTH') || isStop(err)) throw err;
    run.deps.log.warn({ collection: run.collection, err: describeError(err) }, 'theme-settings schema not mirrored');
  }
}

/**
 * What a run started by watch does under the collection's lease: the incremental passes of every variant (unless
 * `pass` is false), then `after` (the deletion search), and never the theme-settings schema, which the schedule's
 * runs keep (a watched collection is passed many times an hour; each read counts).
 */
export interface WatchedRun {
  readonly pass: boolean;
  readonly after?: (run: Run) => Promise<void>;
}

/** The collection's lease taken (or not: held by another run, or a failure taking it). */
interface Taken {
  readonly lease: Lease | null;
  readonly failure: unknown;
  readonly locked: boolean;
}

/** Takes the run's lease on its collection, waiting `waitMs` for another run's (none for a quiet first try). */
async function takeCollection(run: Run, signal: AbortSignal, quietIfLocked: boolean | undefined): Promise<Taken> {
  const { deps } = run;
  let lease: Lease | null = null;
  try {
    lease = await takeLease(
      deps.store,
      { tenant: run.tenant, collection: run.collection },
      {
        holder: leaseHolder(),
        ttlMs: deps.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS,
        waitMs: quietIfLocked ? 0 : (deps.waitMs ?? 0),
        clock: run.clock,
        signal,
      },
    );
  } catch (err) {
    return { lease: null, failure: err, locked: false };
  }
  if (lease) return { lease, failure: null, locked: false };
  run.report.skipped = LOCKED;
  run.report.errorCode = 'US_LOCKED';
  // Who holds it, for the operator's one line; a failure to look it up leaves the report without it.
  const current = await deps.store.leaseHolder(run.tenant, run.collection).catch(() => null);
  if (current) run.report.heldBy = { holder: current.holder, until: current.expiresAt };
  return { lease: null, failure: null, locked: true };
}

/**
 * Mirrors every variant of the collection under the run's lease, kept alive meanwhile; a lease lost on the way
 * aborts the request in flight (`fenced`). Returns the failure, or null.
 */
async function mirrorLeased(
  run: Run,
  target: TenantTarget,
  mode: SyncMode,
  reach: Exclude<Reach, { how: 'none' }>,
  lease: Lease,
  fenced: AbortController,
  watched?: WatchedRun,
): Promise<unknown> {
  run.lease = lease;
  let lost = false;
  let failure: unknown = null;
  const keeper = keepLease(run.deps.store, lease, () => {
    lost = true;
    fenced.abort();
  });
  try {
    if (watched?.pass !== false)
      for (const spec of variantsFor(target, run.collection)) {
        run.passing = spec.variant;
        if (reach.how === 'list') await syncListed(run, spec, mode);
        else if (reach.how === 'get') await syncByReference(run, spec, mode);
        else if (reach.how === 'embedded') await syncEmbedded(run, spec, mode, reach.from);
      }
    // Watch's search compares the published rows; the theme-settings schema is no variant's (watch never reads it).
    run.passing = watched ? PUBLISHED : null;
    if (watched) await watched.after?.(run);
    else await syncThemeSchema(run);
    run.passing = null;
  } catch (err) {
    failure = err;
  }
  await keeper.stop();
  if (lost && !hasCode(failure, 'US_LEASE_LOST')) failure = new LeaseLostError(lease);
  return failure;
}

/**
 * A failure into the report and, when the run still holds its lease, into the sync state (`lastError`); then the
 * lease released, last, after the fenced commits (each renews it): a lease that changed hands is not ours to end.
 */
async function settle(run: Run, failure: unknown, lease: Lease | null): Promise<void> {
  const code = codeOf(failure);
  if (failure) {
    run.report.error = describeError(failure);
    if (code) run.report.errorCode = code;
  }
  // A graceful stop is not a failure: committed pages stay, the next run resumes, and status shows no error.
  const stopped = isStop(failure);
  const fencedOff = code === 'US_LEASE_LOST';
  if (failure && !stopped && !fencedOff && lease) {
    // Fenced like every commit: a run that lost its lease leaves the state to the run that took it.
    const key = run.key(PUBLISHED);
    const state = await run.deps.store.getSyncState(key);
    const failed = { lastError: run.report.error ?? null, lastErrorAt: run.now(), lastErrorVariant: run.passing };
    await run.saveState(key, { ...state, ...failed }).catch(() => undefined);
  }
  if (lease && !fencedOff) await run.deps.store.releaseLease(lease).catch(() => undefined);
}

/** No answer came at all, retries included (refused, reset, timed out): the upstream cannot be reached. */
const unreachable = (err: unknown): boolean => isUpstreamError(err) && err.status === 0;

/** How a run ended, as `sync_runs.status` says it. */
type RunStatus = 'stopped' | 'failed' | 'skipped' | 'ok';

/** The run's row in `sync_runs`. */
async function recordRun(run: Run, target: TenantTarget, mode: SyncMode, status: RunStatus): Promise<void> {
  const { report } = run;
  await run.deps.store.recordRun({
    runId: run.runId,
    tenant: target.slug,
    collection: run.collection,
    variant: variantsFor(target, run.collection)
      .map((v) => v.variant)
      .join(','),
    mode,
    startedAt: run.startedAt,
    finishedAt: run.now(),
    status,
    fetched: report.fetched,
    inserted: report.inserted,
    updated: report.updated,
    unchanged: report.unchanged,
    deleted: report.deleted,
    requests: report.requests,
    ms: report.ms,
    error: report.error ?? report.skipped ?? null,
  });
}

/** The run's one outcome line (a watched run's at debug level unless it failed: there are many of them). */
function logOutcome(log: Logger, run: Run, status: RunStatus, code: string | undefined, quiet: boolean): void {
  // `name` is the `collection` the child logger already binds: one field, one name.
  const { errorCode: _omit, name: _name, ...outcome } = run.report;
  const said = status === 'skipped' ? 'sync skipped' : status === 'stopped' ? 'sync stopped' : 'sync finished';
  if (status === 'failed') log.error({ ...outcome, code }, 'sync failed');
  else if (quiet) log.debug({ ...outcome, watch: true }, said);
  else log.info(outcome, said);
}

/** The end of a collection's run: its report finished, the failure settled, the run recorded and logged. */
async function endRun(
  run: Run,
  target: TenantTarget,
  mode: SyncMode,
  started: number,
  taken: Taken & { readonly skipped: boolean },
  failure: unknown,
  opts: { readonly quiet?: boolean; readonly throwUnreachable?: boolean } = {},
): Promise<CollectionReport> {
  const log = run.deps.log.child({ tenant: target.slug, collection: run.collection });
  run.report.ms = Date.now() - started;
  if (run.report.future > 0) {
    const futureAfter = new Date(run.futureAfter).toISOString();
    log.warn({ future: run.report.future, ids: run.futureIds, futureAfter }, 'records dated in the future');
  }
  await settle(run, failure, taken.lease);
  const code = codeOf(failure);
  const status: RunStatus = isStop(failure)
    ? 'stopped'
    : failure
      ? 'failed'
      : taken.skipped || taken.locked
        ? 'skipped'
        : 'ok';
  await recordRun(run, target, mode, status);
  logOutcome(log, run, status, code, opts.quiet === true);
  if (code === 'US_AUTH' || isStop(failure)) throw failure;
  if (opts.throwUnreachable && unreachable(failure)) throw failure;
  return run.report;
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
    /** A run started by watch: what it does under the lease instead of the usual passes (docs/watch.md). */
    readonly watched?: WatchedRun;
    /**
     * Throw, after recording the run, when the upstream could not be reached at all: a caller with more collections
     * to go stops there rather than spend each one's retries to learn the same (`syncTenant`).
     */
    readonly throwUnreachable?: boolean;
  } = {},
): Promise<CollectionReport> {
  const started = Date.now();
  // Lost lease: the request in flight is dropped at once (nothing of it could be committed anyway).
  const fenced = new AbortController();
  const run = new Run(deps, target.slug, collection, AbortSignal.any([signal, fenced.signal]));
  const reach = reachOf(collection, routes);
  let taken: Taken = { lease: null, failure: null, locked: false };
  if (reach.how === 'none') run.report.skipped = reach.reason;
  else {
    taken = await takeCollection(run, signal, opts.quietIfLocked);
    if (taken.locked && opts.quietIfLocked) return run.report;
  }
  const failure =
    taken.lease && reach.how !== 'none'
      ? await mirrorLeased(run, target, mode, reach, taken.lease, fenced, opts.watched)
      : taken.failure;
  const skipped = { ...taken, skipped: reach.how === 'none' };
  return endRun(run, target, mode, started, skipped, failure, {
    quiet: opts.watched !== undefined,
    ...(opts.throwUnreachable ? { throwUnreachable: true } : {}),
  });
}
