import type { Logger } from '../log.js';
import type { PartnersClient } from '../partners/partners-client.js';
import type { SyncDeps } from '../sync/sync-run.js';
import type { App } from './create-app.js';

/** What a run adds to the app's sync deps: a graceful stop, its own log, how long it waits for a lease, progress. */
export interface SyncDepsOptions {
  readonly stop?: AbortSignal;
  readonly log?: Logger;
  readonly waitMs?: number;
  readonly onProgress?: SyncDeps['onProgress'];
  readonly onWaiting?: SyncDeps['onWaiting'];
}

/**
 * The sync deps of a run the app starts (a worker's job, a watch turn, an inline sync, a check's repair) on
 * `client`: the app's store and log, the config's clock-skew allowance (read here and nowhere else), the mirror's
 * freshness reported to the metrics, and what the run adds (`opts`; a signal alone: its graceful stop). Reached as
 * `app.syncDeps(client, opts)`.
 */
export function appSyncDeps(app: App, client: PartnersClient, opts: SyncDepsOptions | AbortSignal = {}): SyncDeps {
  const { stop, log, waitMs, onProgress, onWaiting } = opts instanceof AbortSignal ? { stop: opts } : opts;
  const clockSkewMs = app.config.sync?.clockSkewMs;
  const metrics = app.metrics;
  return {
    client,
    store: app.store,
    log: log ?? app.log,
    ...(stop ? { stop } : {}),
    ...(clockSkewMs !== undefined ? { clockSkewMs } : {}),
    ...(waitMs ? { waitMs } : {}),
    ...(onProgress ? { onProgress } : {}),
    ...(onWaiting ? { onWaiting } : {}),
    ...(metrics
      ? { onFresh: (p) => metrics.freshness({ tenant: client.tenant, collection: p.collection, lagsMs: p.lagsMs }) }
      : {}),
  };
}
