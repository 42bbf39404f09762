import type { Config } from '../config/config-schema.js';
import { type ResolvedTenant, resolveTenants } from '../config/resolve-tenants.js';
import { UsageError } from '../errors.js';
import { createLogger, type Logger } from '../log.js';
import type { SyncMode } from '../sync/sync-collection.js';
import { syncTenant, type TenantReport } from '../sync/sync-tenant.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import { type App, createApp } from './create-app.js';

/** One inline sync (`understudy sync`): the config, the mirror, the tenants and collections chosen, and the mode. */
export interface SyncInvocation {
  readonly config: Config;
  readonly database: string;
  readonly tenants: readonly string[];
  readonly collections: readonly CollectionSlug[];
  readonly mode: SyncMode;
  /** Use the in-process gate even when Redis is configured. */
  readonly localBudget?: boolean;
  /** How long to wait for a collection another run holds (`--wait`, in ms); default 0. */
  readonly waitMs?: number;
}

/** A tenant whose sync failed as a whole (its key refused, its routes not discovered), and why. */
export interface TenantFailure {
  readonly slug: string;
  readonly apiKeyEnv: string;
  readonly error: unknown;
}

export interface RunSyncOptions {
  readonly signal: AbortSignal;
  readonly env?: NodeJS.ProcessEnv;
  /** The runs' log; default one at LOG_LEVEL (else info). */
  readonly log?: Logger;
  /** The app to run on (`sync --watch`, which watches on it after); default one of its own. */
  readonly app?: App;
  /** Told of each page committed: the records of the collection this run has committed so far. */
  readonly onProgress?: (tenant: string, p: { collection: CollectionSlug; fetched: number; total?: number }) => void;
  /** Told while a collection waits for its key's budget. */
  readonly onWaiting?: (tenant: string, w: { collection: CollectionSlug; since: number | null }) => void;
  /** Told once a tenant's sync has ended (done, or failed), with what it did. */
  readonly onTenantDone?: (tenant: string, report: TenantReport) => void;
}

/** The app of an inline sync: one budget per key, with Redis configured the workers' shared gate (unless --local-budget). */
export const openSyncApp = (inv: SyncInvocation, env: NodeJS.ProcessEnv, log: Logger): Promise<App> =>
  createApp(inv.config, env, {
    profile: 'sync',
    log,
    database: inv.database,
    tenants: inv.tenants,
    gates: inv.localBudget ? 'memory' : 'shared',
  });

/** Runs one sync of every chosen tenant, in parallel across tenants; one tenant's failure leaves the others running. */
export async function runSync(
  inv: SyncInvocation,
  opts: RunSyncOptions,
): Promise<{ reports: TenantReport[]; failures: TenantFailure[]; failure: unknown }> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? createLogger({ level: env.LOG_LEVEL || 'info' });
  const resolved: ResolvedTenant[] = resolveTenants(inv.config, env, inv.tenants);
  await using owned = opts.app ? null : await openSyncApp(inv, env, log);
  const app = opts.app ?? (owned as App);
  const failures: TenantFailure[] = [];
  const reports = await Promise.all(
    resolved.map(async (tenant): Promise<TenantReport> => {
      const report: TenantReport = { slug: tenant.slug, collections: [] };
      try {
        return await syncOneTenant(app, inv, { ...opts, log }, tenant.slug, report);
      } catch (err) {
        // What this tenant finished before it failed stays in the mirror, and in the report; the others go on.
        failures.push({ slug: tenant.slug, apiKeyEnv: tenant.apiKeyEnv, error: err });
        return report;
      } finally {
        opts.onTenantDone?.(tenant.slug, report);
      }
    }),
  );
  return { reports, failures, failure: failures[0]?.error ?? null };
}

/** One tenant's sync: the app's client and target for it (the collections narrowed to `--collection`'s). */
function syncOneTenant(
  app: App,
  inv: SyncInvocation,
  opts: RunSyncOptions & { readonly log: Logger },
  slug: string,
  report: TenantReport,
): Promise<TenantReport> {
  const tenant = app.tenant(slug);
  if (!tenant) throw new UsageError(`--tenant ${slug}: not a tenant of the config`);
  const target = inv.collections.length > 0 ? { ...tenant.target, collections: inv.collections } : tenant.target;
  const { onProgress, onWaiting } = opts;
  const deps = app.syncDeps(tenant.client, {
    log: opts.log,
    ...(inv.waitMs ? { waitMs: inv.waitMs } : {}),
    ...(onProgress ? { onProgress: (p) => onProgress(slug, p) } : {}),
    ...(onWaiting ? { onWaiting: (w) => onWaiting(slug, w) } : {}),
  });
  return syncTenant(deps, target, inv.mode, opts.signal, undefined, report);
}
