import { createApp } from '../app/create-app.js';
import type { Config } from '../config/config-schema.js';
import { databasePath } from '../config/database-path.js';
import { loadConfigFile, parseConfig } from '../config/load-config.js';
import { type ResolvedTenant, resolveTenants } from '../config/resolve-tenants.js';
import { isCronExpression } from '../config/schedule-checks.js';
import { describeError, UnderstudyError, UsageError } from '../errors.js';
import { createLogger } from '../log.js';
import { openSharedBudget } from '../queue/shared-budget.js';
import type { CollectionReport, SyncMode } from '../sync/sync-collection.js';
import { syncTenant, type TenantReport } from '../sync/sync-tenant.js';
import { type CollectionSlug, isCollectionSlug } from '../vocabulary/collections.js';
import { exitCodeFor } from './exit-codes.js';
import { formatTable } from './format-table.js';
import { parseFlags } from './parse-flags.js';

const HELP = `usage: understudy sync [--config FILE] [--base-url URL] [--tenant SLUG]... [--collection NAME]...
                       [--full] [--db FILE] [--json] [--local-budget]

Mirrors tenants of the Content Partners API into SQLite. Without --config, the key comes from PARTNERS_API_KEY,
the base URL from --base-url or PARTNERS_BASE_URL, the database from --db, UNDERSTUDY_DB or ./data/understudy.db.

  --config FILE       JSON config listing tenants (keys are named by apiKeyEnv, never written in the file)
  --base-url URL      upstream origin, e.g. https://partners.example.org
  --tenant SLUG       tenant to sync (repeatable; default: every tenant of the config)
  --collection NAME   collection to sync, as in the API path (repeatable; default: all)
  --full              full sync with deletion reconciliation (default: incremental since the stored cursor)
  --db FILE           SQLite file of the mirror
  --json              print exactly one JSON object with the outcome on stdout
  --local-budget      pace each key with this process's own rate gate even when Redis is configured (default:
                      with config redis or REDIS_URL, the key's budget is shared there with the workers)
  --enqueue           add a sync job to the worker queue (Redis) instead of syncing here; prints its id
  --schedule CRON     keep running, syncing on each tick of CRON (no Redis; runs never overlap); each tenant's
                      ticks are read in its schedule.timezone (without a schedule: the process's zone)
`;

const FLAGS = {
  config: { type: 'string' },
  'base-url': { type: 'string' },
  tenant: { type: 'string', multiple: true },
  collection: { type: 'string', multiple: true },
  full: { type: 'boolean' },
  db: { type: 'string' },
  json: { type: 'boolean' },
  'local-budget': { type: 'boolean' },
  enqueue: { type: 'boolean' },
  schedule: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export interface SyncInvocation {
  readonly config: Config;
  readonly database: string;
  readonly tenants: readonly string[];
  readonly collections: readonly CollectionSlug[];
  readonly mode: SyncMode;
  /** Use the in-process gate even when Redis is configured. */
  readonly localBudget?: boolean;
}

/** Turns flags and environment into a validated config: `--config` file, or a one-key config built from flags. */
export function resolveInvocation(
  values: ReturnType<typeof parseSyncFlags>['values'],
  env: NodeJS.ProcessEnv,
): SyncInvocation {
  const tenants = values.tenant ?? [];
  const collections = (values.collection ?? []).map((c) => {
    if (!isCollectionSlug(c))
      throw new UsageError(`--collection ${c}: not a collection (use the API path name, e.g. event-instances)`);
    return c;
  });
  let config: Config;
  if (values.config) {
    config = loadConfigFile(values.config);
    if (values['base-url'])
      config = { ...config, baseUrl: parseConfig({ ...config, baseUrl: values['base-url'] }, '--base-url').baseUrl };
  } else {
    const baseUrl = values['base-url'] ?? env.PARTNERS_BASE_URL;
    if (!baseUrl) throw new UsageError('--base-url URL (or PARTNERS_BASE_URL) is required without --config');
    if (tenants.length === 0) throw new UsageError('--tenant SLUG is required without --config');
    config = parseConfig(
      { baseUrl, tenants: tenants.map((slug) => ({ slug, apiKeyEnv: 'PARTNERS_API_KEY' })) },
      'flags',
    );
  }
  const database = databasePath(config, env, values.db);
  return {
    config,
    database,
    tenants,
    collections,
    mode: values.full ? 'full' : 'incremental',
    ...(values['local-budget'] ? { localBudget: true } : {}),
  };
}

/** The config's `sync` tuning, as sync deps. */
export const syncTuning = (config: Config): { clockSkewMs?: number } =>
  config.sync?.clockSkewMs !== undefined ? { clockSkewMs: config.sync.clockSkewMs } : {};

const parseSyncFlags = (argv: string[]) => parseFlags(argv, FLAGS);

/** Runs one sync of every chosen tenant, in parallel across tenants; a refused key aborts them all. */
export async function runSync(
  inv: SyncInvocation,
  opts: { json: boolean; signal: AbortSignal; env?: NodeJS.ProcessEnv },
): Promise<{ reports: TenantReport[]; failure: unknown }> {
  const env = opts.env ?? process.env;
  const tty = !opts.json && process.stderr.isTTY === true;
  const log = createLogger({ level: tty ? 'warn' : (env.LOG_LEVEL ?? 'info') });
  const resolved: ResolvedTenant[] = resolveTenants(inv.config, env, inv.tenants);
  // One budget per key: with Redis configured, the workers' shared gate (closed after the app that uses it).
  await using budget = inv.localBudget ? null : await openSharedBudget(inv.config, env, log);
  await using app = await createApp(inv.config, env, {
    log,
    database: inv.database,
    tenants: inv.tenants,
    ...(budget ? { gateFor: budget.gateFor } : {}),
  });
  const abort = new AbortController();
  const signal = AbortSignal.any([abort.signal, opts.signal]);
  let failure: unknown = null;
  const reports = await Promise.all(
    resolved.map(async (tenant): Promise<TenantReport> => {
      const progress = tty
        ? (p: { collection: CollectionSlug; pages: number; fetched: number }) =>
            process.stderr.write(`\r\x1b[K${tenant.slug} ${p.collection}: ${p.pages} pages, ${p.fetched} records`)
        : undefined;
      const report: TenantReport = { slug: tenant.slug, collections: [] };
      try {
        return await syncTenant(
          {
            client: app.clientFor(tenant),
            store: app.store,
            log,
            ...syncTuning(inv.config),
            ...(progress ? { onProgress: progress } : {}),
          },
          {
            slug: tenant.slug,
            drafts: tenant.drafts,
            ...(tenant.locales ? { locales: tenant.locales } : {}),
            ...(inv.collections.length > 0
              ? { collections: inv.collections }
              : tenant.collections
                ? { collections: tenant.collections }
                : {}),
          },
          inv.mode,
          signal,
          undefined,
          report,
        );
      } catch (err) {
        failure ??= err;
        abort.abort();
        // What this tenant finished before the stop stays in the mirror, and in the report.
        return report;
      } finally {
        if (tty) process.stderr.write('\r\x1b[K');
      }
    }),
  );
  return { reports, failure };
}

const worstExit = (reports: TenantReport[]): number => {
  let code = 0;
  for (const t of reports)
    for (const c of t.collections)
      if (c.error) {
        const e =
          c.errorCode === 'US_UPSTREAM_UNAVAILABLE' ||
          c.errorCode === 'US_RATE_LIMITED' ||
          c.errorCode === 'US_UPSTREAM_STUCK'
            ? 4
            : c.errorCode === 'US_AUTH'
              ? 3
              : 1;
        code = Math.max(code, e);
      }
  return code;
};

const publicReport = (c: CollectionReport) => {
  const { errorCode: _code, ...rest } = c;
  return rest;
};

export function summaryTable(reports: TenantReport[]): string {
  const rows = reports.flatMap((t) =>
    t.collections.map((c) => ({
      tenant: t.slug,
      collection: c.name,
      fetched: c.fetched,
      inserted: c.inserted,
      updated: c.updated,
      unchanged: c.unchanged,
      deleted: c.deleted,
      requests: c.requests,
      ms: c.ms,
      note: c.error ? `error: ${c.error}` : c.skipped ? `skipped: ${c.skipped}` : '',
    })),
  );
  return formatTable(rows);
}

export async function syncCommand(argv: string[]): Promise<number> {
  const { values } = parseSyncFlags(argv);
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const inv = resolveInvocation(values, process.env);
  if (values.enqueue) {
    if (values.schedule) throw new UsageError('--enqueue and --schedule do not go together');
    const { enqueueSync } = await import('../queue/enqueue-sync.js');
    const { redisSettings } = await import('../queue/redis-settings.js');
    const redis = redisSettings(inv.config, process.env);
    const slugs = inv.tenants.length > 0 ? inv.tenants : inv.config.tenants.map((t) => t.slug);
    const ids: string[] = [];
    for (const tenant of slugs) {
      const id = await enqueueSync({
        redisUrl: redis.url,
        prefix: redis.prefix,
        tenant,
        ...(inv.collections.length > 0 ? { collections: inv.collections } : {}),
        mode: inv.mode,
      });
      ids.push(id);
    }
    process.stdout.write(values.json ? `${JSON.stringify({ jobs: ids })}\n` : `${ids.join('\n')}\n`);
    return 0;
  }
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    if (values.schedule) {
      const { runOnSchedule, tenantsByTimezone } = await import('../sync/schedule-inline.js');
      const expression = values.schedule;
      if (!isCronExpression(expression)) throw new UsageError(`--schedule: not a cron expression: "${expression}"`);
      // Each tenant's ticks are read in its own schedule.timezone: one cron task per zone. Runs never overlap, across
      // zones too (one mirror, one budget per key): a zone whose tick comes during another's run waits for it.
      let previous: Promise<void> = Promise.resolve();
      const serialised = (run: () => Promise<void>): Promise<void> => {
        const next = previous.then(run);
        previous = next.catch(() => {});
        return next;
      };
      const onError = (err: unknown) => process.stderr.write(`understudy sync: ${describeError(err)}\n`);
      await Promise.all(
        [...tenantsByTimezone(inv.config, inv.tenants)].map(([timezone, tenants]) =>
          runOnSchedule(
            expression,
            (signal) =>
              serialised(async () => {
                if (signal.aborted) return;
                const { reports, failure } = await runSync({ ...inv, tenants }, { json: false, signal });
                process.stdout.write(`${summaryTable(reports)}\n`);
                if (failure) onError(failure);
              }),
            stop.signal,
            { onError, ...(timezone ? { timezone } : {}) },
          ),
        ),
      );
      return 0;
    }
    const { reports, failure } = await runSync(inv, { json: values.json === true, signal: stop.signal });
    if (values.json) {
      process.stdout.write(
        `${JSON.stringify({ tenants: reports.map((t) => ({ slug: t.slug, collections: t.collections.map(publicReport) })) })}\n`,
      );
    } else {
      process.stdout.write(`${summaryTable(reports)}\n`);
    }
    if (failure) {
      process.stderr.write(`understudy sync: ${describeError(failure)}\n`);
      return failure instanceof UnderstudyError ? exitCodeFor(failure) : 1;
    }
    const code = worstExit(reports);
    if (code !== 0) {
      const first = reports.flatMap((t) => t.collections.map((c) => ({ t, c }))).find(({ c }) => c.error);
      if (first) process.stderr.write(`understudy sync: ${first.t.slug} ${first.c.name}: ${first.c.error}\n`);
    }
    return code;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
