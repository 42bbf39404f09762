import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** What watch (config `watch`) and every incremental pass report (docs/watch.md). */
export interface WatchMetrics {
  /** Observes how long records took from their upstream `updatedAt` to their commit in the mirror (ms each). */
  freshness(e: { readonly tenant: string; readonly collection: string; readonly lagsMs: readonly number[] }): void;
  /** Counts one watch turn of a collection by its outcome (quiet, changed, deleted, locked, failed). */
  watchProbe(e: { readonly tenant: string; readonly collection: string; readonly outcome: string }): void;
  /** Sets the share of a key's read budget watch used over the key's last window (0 to 1). */
  watchShare(e: { readonly key: string; readonly share: number }): void;
}

/** The watch metrics on `registry`. */
export function watchMetrics(registry: Registry): WatchMetrics {
  const registers = [registry];
  const freshness = new Histogram({
    name: 'understudy_freshness_seconds',
    help:
      "Time from a record's upstream updatedAt to its commit in the mirror, for records an incremental pass inserted " +
      'or updated (watch and scheduled runs), by tenant and collection.',
    labelNames: ['tenant', 'collection'] as const,
    buckets: [1, 2, 5, 10, 20, 30, 60, 120, 300, 900, 3600, 86_400],
    registers,
  });
  const probes = new Counter({
    name: 'understudy_watch_probes_total',
    help:
      'Watch turns of a collection (one probe each, and the pass or search it started), by tenant, collection and ' +
      'outcome (quiet, changed, deleted, locked: another run held it, failed).',
    labelNames: ['tenant', 'collection', 'outcome'] as const,
    registers,
  });
  const share = new Gauge({
    name: 'understudy_watch_budget_share',
    help:
      "The share of a key's read budget watch used over the key's last window (0 to 1; watch.maxShare bounds it), " +
      'by key (its hash, as understudy_* metrics and Redis name keys).',
    labelNames: ['key'] as const,
    registers,
  });
  return {
    freshness(e) {
      for (const ms of e.lagsMs) freshness.observe({ tenant: e.tenant, collection: e.collection }, ms / 1000);
    },
    watchProbe(e) {
      probes.inc({ tenant: e.tenant, collection: e.collection, outcome: e.outcome });
    },
    watchShare(e) {
      share.set({ key: e.key }, e.share);
    },
  };
}
