import { createApp } from '../app/create-app.js';
import type { Config } from '../config/config-schema.js';
import { databasePath } from '../config/database-path.js';
import { loadConfigFile, parseConfig } from '../config/load-config.js';
import { type ResolvedTenant, resolveTenants } from '../config/resolve-tenants.js';
import { isCronExpression } from '../config/schedule-checks.js';
import { describeError, UsageError } from '../errors.js';
import { createLogger } from '../log.js';
import type { CollectionReport, SyncMode } from '../sync/sync-collection.js';
import { syncTenant, type TenantReport } from '../sync/sync-tenant.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import { collectionFlags } from './collection-flag.js';
import { printHelp } from './command-help.js';
import { formatTable } from './format-table.js';
import { parseFlags } from './parse-flags.js';
import { ProgressDisplay } from './progress-display.js';
import { SYNC_SPEC } from './specs/sync-spec.js';
import { Committed, isStop, syncExitCode, type TenantFailure, tenantFailureText } from './sync-output.js';
import { runConfigSchedules } from './sync-schedule.js';

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

/** Turns flags and environment into a validated config: `--config` file, or a one-key config built from flags. */
export function resolveInvocation(
  values: ReturnType<typeof parseSyncFlags>['values'],
  env: NodeJS.ProcessEnv,
): SyncInvocation {
  const tenants = values.tenant ?? [];
  const collections = collectionFlags(values.collection);
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
  const wait = values.wait === undefined ? 0 : Number(values.wait);
  if (!Number.isFinite(wait) || wait < 0)
    throw new UsageError(`--wait ${values.wait}: must be a number of seconds, 0 or more`);
  return {
    config,
    database,
    tenants,
    collections,
    mode: values.full ? 'full' : 'incremental',
    ...(values['local-budget'] ? { localBudget: true } : {}),
    ...(wait > 0 ? { waitMs: wait * 1000 } : {}),
  };
}

/** The config's `sync` tuning, as sync deps. */
export const syncTuning = (config: Config): { clockSkewMs?: number } =>
  config.sync?.clockSkewMs !== undefined ? { clockSkewMs: config.sync.clockSkewMs } : {};

const parseSyncFlags = (argv: string[]) => parseFlags(argv, SYNC_SPEC);

/** Runs one sync of every chosen tenant, in parallel across tenants; one tenant's failure leaves the others running. */
export async function runSync(
  inv: SyncInvocation,
  opts: { json: boolean; signal: AbortSignal; env?: NodeJS.ProcessEnv; display?: ProgressDisplay | null },
): Promise<{ reports: TenantReport[]; failures: TenantFailure[]; failure: unknown; committed: Committed }> {
  const env = opts.env ?? process.env;
  const display = opts.display ?? null;
  // With progress on the screen, the log is for what goes wrong (LOG_LEVEL still wins), and it prints above it.
  const log = createLogger({
    level: env.LOG_LEVEL || (display ? 'warn' : 'info'),
    ...(display ? { write: (line: string) => display.log(line) } : {}),
  });
  const resolved: ResolvedTenant[] = resolveTenants(inv.config, env, inv.tenants);
  // One budget per key: with Redis configured, the workers' shared gate (unless --local-budget).
  await using app = await createApp(inv.config, env, {
    profile: 'sync',
    log,
    database: inv.database,
    tenants: inv.tenants,
    gates: inv.localBudget ? 'memory' : 'shared',
  });
  const { signal } = opts;
  const failures: TenantFailure[] = [];
  // Records committed, page by page: what a stopped run keeps (a collection cut short is in no report).
  const committed = new Committed();
  const reports = await Promise.all(
    resolved.map(async (tenant): Promise<TenantReport> => {
      const report: TenantReport = { slug: tenant.slug, collections: [] };
      try {
        return await syncTenant(
          {
            client: app.clientFor(tenant),
            store: app.store,
            log,
            ...syncTuning(inv.config),
            onProgress: (p: { collection: CollectionSlug; fetched: number; total?: number }) => {
              committed.note(tenant.slug, p.collection, p.fetched);
              display?.progress(tenant.slug, p);
            },
            ...(display
              ? {
                  onWaiting: (w: { collection: CollectionSlug; since: number | null }) =>
                    display.waiting(tenant.slug, w.collection, w.since),
                }
              : {}),
            ...(inv.waitMs ? { waitMs: inv.waitMs } : {}),
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
        // What this tenant finished before it failed stays in the mirror, and in the report; the others go on.
        failures.push({ slug: tenant.slug, apiKeyEnv: tenant.apiKeyEnv, error: err });
        return report;
      } finally {
        const n = report.collections.reduce((sum, c) => sum + c.fetched, 0);
        display?.finished(tenant.slug, `${report.collections.length} collections, ${n} records read`);
      }
    }),
  );
  return { reports, failures, failure: failures[0]?.error ?? null, committed };
}

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

/**
 * Prints what one run did: the JSON object (`--json`), else the summary table (not with `--quiet`); then one line
 * on stderr per failed tenant and per failed collection, and what a stopped run committed. Returns the exit code.
 */
function reportRun(
  result: { reports: TenantReport[]; failures: readonly TenantFailure[]; committed: Committed },
  inv: SyncInvocation,
  values: { json?: boolean; quiet?: boolean },
): number {
  const { reports, failures } = result;
  if (values.json) {
    const errorOf = (slug: string) => failures.find((f) => f.slug === slug && !isStop(f.error));
    process.stdout.write(
      `${JSON.stringify({
        tenants: reports.map((t) => {
          const failed = errorOf(t.slug);
          return {
            slug: t.slug,
            collections: t.collections.map(publicReport),
            ...(failed ? { error: tenantFailureText(failed, inv.config.baseUrl) } : {}),
          };
        }),
      })}\n`,
    );
  } else if (!values.quiet) {
    process.stdout.write(`${summaryTable(reports)}\n`);
  }
  const say = (line: string) => process.stderr.write(`understudy sync: ${line}\n`);
  if (failures.some((f) => isStop(f.error))) say(result.committed.text());
  for (const f of failures) if (!isStop(f.error)) say(tenantFailureText(f, inv.config.baseUrl));
  for (const t of reports) for (const c of t.collections) if (c.error) say(`${t.slug} ${c.name}: ${c.error}`);
  return syncExitCode(reports, failures);
}

export async function syncCommand(argv: string[]): Promise<number> {
  const { values, help } = parseSyncFlags(argv);
  if (help) return printHelp(SYNC_SPEC, help);
  const inv = resolveInvocation(values, process.env);
  if (values.enqueue) {
    if (values.schedule) throw new UsageError('--enqueue and --schedule do not go together');
    const { addSyncJob } = await import('../queue/enqueue-sync.js');
    const slugs = inv.tenants.length > 0 ? inv.tenants : inv.config.tenants.map((t) => t.slug);
    const ids: string[] = [];
    await using app = await createApp(inv.config, process.env, { profile: 'queue', database: inv.database });
    for (const tenant of slugs) {
      const id = await addSyncJob(app.redis, app.redisSettings.prefix, {
        tenant,
        ...(inv.collections.length > 0 ? { collections: inv.collections } : {}),
        mode: inv.mode,
      });
      ids.push(id);
    }
    if (values.json) process.stdout.write(`${JSON.stringify({ jobs: ids })}\n`);
    else if (!values.quiet) process.stdout.write(`${ids.join('\n')}\n`);
    return 0;
  }
  // Progress only for a person watching: on a terminal, and not when asked for quiet or JSON.
  const terminal = process.stderr.isTTY === true && !values.json && !values.quiet;
  const once = async (run: SyncInvocation, signal: AbortSignal): Promise<number> => {
    const display = terminal ? new ProgressDisplay() : null;
    try {
      const result = await runSync(run, { json: values.json === true, signal, display });
      display?.stop();
      return reportRun(result, run, values);
    } finally {
      display?.stop();
    }
  };
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    if (values.schedule === true) {
      // The config's own schedules. Between runs a terminal shows the next one, on one line kept up to date.
      // A stop during a run says what that run committed; a stop between runs says so.
      let stoppedInRun = false;
      await runConfigSchedules(inv.config, inv.tenants, stop.signal, {
        run: async (r, signal) => {
          await once({ ...inv, tenants: [r.tenant], mode: r.mode }, signal);
          stoppedInRun = signal.aborted;
        },
        ...(terminal
          ? {
              onStart: (lines: readonly string[]) => process.stderr.write(`${lines.join('\n')}\n`),
              onIdle: (next: string | null) => process.stderr.write(`\r\x1b[K${next ?? 'nothing scheduled'}`),
              onRunStart: () => process.stderr.write('\r\x1b[K'),
            }
          : {}),
      });
      if (!stoppedInRun)
        process.stderr.write(
          `${terminal ? '\r\x1b[K' : ''}understudy sync: stopped between runs; every run so far is committed\n`,
        );
      return 0;
    }
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
                await once({ ...inv, tenants }, signal);
              }),
            stop.signal,
            { onError, ...(timezone ? { timezone } : {}) },
          ),
        ),
      );
      return 0;
    }
    return await once(inv, stop.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
