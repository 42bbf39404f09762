import { randomUUID } from 'node:crypto';
import { describeError, UnderstudyError } from '../errors.js';
import { PUBLISHED } from '../store/store.js';
import { type CollectionSlug, THEME_SCHEMA_COLLECTIONS } from '../vocabulary/collections.js';
import type { ReadRoutes } from './discover-routes.js';
import { syncListed } from './list-pass.js';
import { reachOf } from './reachability.js';
import { syncByReference } from './sync-by-reference.js';
import { syncEmbedded } from './sync-embedded.js';
import { type CollectionReport, Run, type SyncDeps, type SyncMode, type TenantTarget } from './sync-run.js';
import { variantsFor } from './variants.js';

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
): Promise<CollectionReport> {
  const started = Date.now();
  const run = new Run(deps, target.slug, collection, signal);
  const log = deps.log.child({ tenant: target.slug, collection });
  const reach = reachOf(collection, routes);
  const startedAt = run.startedAt;
  let failure: unknown = null;
  if (reach.how === 'none') {
    run.report.skipped = reach.reason;
  } else {
    try {
      for (const spec of variantsFor(target, collection)) {
        if (reach.how === 'list') await syncListed(run, spec, mode);
        else if (reach.how === 'get') await syncByReference(run, spec, mode);
        else await syncEmbedded(run, spec, mode, reach.from);
      }
      await syncThemeSchema(run);
    } catch (err) {
      failure = err;
    }
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
  if (failure && !stopped) {
    const key = run.key(PUBLISHED);
    const state = await deps.store.getSyncState(key);
    await deps.store.saveSyncState(key, { ...state, lastError: run.report.error ?? null });
  }
  await deps.store.recordRun({
    runId: deps.runId ?? randomUUID(),
    tenant: target.slug,
    collection,
    variant: variantsFor(target, collection)
      .map((v) => v.variant)
      .join(','),
    mode,
    startedAt,
    finishedAt: run.now(),
    status: stopped ? 'stopped' : failure ? 'failed' : reach.how === 'none' ? 'skipped' : 'ok',
    fetched: run.report.fetched,
    inserted: run.report.inserted,
    updated: run.report.updated,
    unchanged: run.report.unchanged,
    deleted: run.report.deleted,
    requests: run.report.requests,
    ms: run.report.ms,
    error: run.report.error ?? run.report.skipped ?? null,
  });
  const { errorCode: _omit, ...outcome } = run.report;
  if (stopped) log.info(outcome, 'sync stopped');
  else if (failure) log.error({ ...outcome, code }, 'sync failed');
  else log.info(outcome, reach.how === 'none' ? 'sync skipped' : 'sync finished');
  if (failure instanceof UnderstudyError && (failure.code === 'US_AUTH' || failure.code === 'US_ABORTED'))
    throw failure;
  return run.report;
}
