import type { PartnersClient } from '../partners/partners-client.js';
import type { SyncDeps } from '../sync/sync-run.js';
import type { App } from './create-app.js';

/**
 * The sync deps of a run the app starts (a worker's job, a watch turn) on `client`: the app's store and log, the
 * config's clock-skew allowance, `stop` for a graceful stop, and the mirror's freshness reported to the metrics.
 */
export function appSyncDeps(app: App, client: PartnersClient, stop: AbortSignal): SyncDeps {
  const clockSkewMs = app.config.sync?.clockSkewMs;
  const metrics = app.metrics;
  return {
    client,
    store: app.store,
    log: app.log,
    stop,
    ...(clockSkewMs !== undefined ? { clockSkewMs } : {}),
    ...(metrics
      ? { onFresh: (p) => metrics.freshness({ tenant: client.tenant, collection: p.collection, lagsMs: p.lagsMs }) }
      : {}),
  };
}
