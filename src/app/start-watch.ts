import { setMaxListeners } from 'node:events';
import { keyHash } from '../partners/key-hash.js';
import type { PartnersClient } from '../partners/partners-client.js';
import { type WatchedTenant, watchTenants } from '../sync/watch-loop.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import type { WatchKnobs } from '../vocabulary/watch-knobs.js';
import type { App, TenantSettings } from './create-app.js';

/** Abort listeners the watch's stop signal may carry without a warning: a few per turn under way. */
const TURN_LISTENERS = 256;

/** A running watch: `done` settles once it has stopped; `close` stops it (turns under way finish first). */
export interface RunningWatch extends AsyncDisposable {
  /** How many tenants it was started with. */
  readonly tenants: number;
  readonly done: Promise<void>;
  close(): Promise<void>;
}

export interface WatchOptions {
  /** Stops the watch too (a worker's SIGTERM). */
  readonly signal?: AbortSignal;
  /** Knobs for the tenants whose config leaves watch off (`sync --watch`); default: those are not watched. */
  readonly fallback?: WatchKnobs;
  /** Only these collections of each tenant (`sync --watch --collection`); default: what the tenant mirrors. */
  readonly collections?: readonly CollectionSlug[];
}

/** The tenant as watch sees it: built once per client, so a reload (new clients) brings it new settings. */
const watchedOf = (
  cache: WeakMap<PartnersClient, WatchedTenant>,
  t: TenantSettings,
  knobs: WatchKnobs,
  collections: readonly CollectionSlug[] | undefined,
) => {
  let w = cache.get(t.client);
  if (!w) {
    const target = collections ? { ...t.target, collections } : t.target;
    w = { target, client: t.client, knobs, budget: t.resolved.budget, keyId: keyHash(t.resolved.apiKey) };
    cache.set(t.client, w);
  }
  return w;
};

/**
 * Keeps the app's watched tenants live (config `watch`, docs/watch.md) until closed or `signal` aborts: the probes,
 * passes and searches of `watchTenants` over the app's clients (each key's rate gate), store and routes, its
 * freshness and budget share reported to the app's metrics.
 */
export function startWatch(app: App, opts: WatchOptions = {}): RunningWatch {
  const stop = new AbortController();
  // Every request of a turn listens to this one signal (undici adds an abort listener per request), and turns run
  // sixteen at once: more listeners than Node's default warning threshold, and none of them leaks.
  setMaxListeners(TURN_LISTENERS, stop.signal);
  const abort = () => stop.abort();
  opts.signal?.addEventListener('abort', abort, { once: true });
  const cache = new WeakMap<PartnersClient, WatchedTenant>();
  const knobsOf = (t: TenantSettings) => t.resolved.watch ?? opts.fallback ?? null;
  const watched = () =>
    app.tenants().flatMap((t) => {
      const knobs = knobsOf(t);
      return knobs ? [watchedOf(cache, t, knobs, opts.collections)] : [];
    });
  const count = watched().length;
  const metrics = app.metrics;
  // Run even with no tenant watched now: a reload may turn watch on (each claim reads the tenants again).
  const done = watchTenants(
    {
      tenants: watched,
      syncDeps: (client) => app.syncDeps(client, { stop: stop.signal }),
      rows: app.watch,
      routesOf: (slug, signal) => app.routesOf(slug, signal),
      onReload: (listener) => app.onReload(listener),
      log: app.log.child({ part: 'watch' }),
      ...(metrics
        ? {
            onProbe: (e) => {
              metrics.watchProbe(e);
              if (e.report) metrics.syncFinished({ tenant: e.tenant, mode: 'watch', report: e.report });
            },
            onShare: (e) => metrics.watchShare(e),
          }
        : {}),
    },
    stop.signal,
  );
  if (count > 0) app.log.info({ tenants: count }, 'watch started');
  const close = async () => {
    stop.abort();
    opts.signal?.removeEventListener('abort', abort);
    await done;
  };
  return { tenants: count, done, close, [Symbol.asyncDispose]: close };
}
