import { type App, createApp } from '../app/create-app.js';
import { openSyncApp, runSync, type SyncInvocation, type TenantFailure } from '../app/run-sync.js';
import { startWatch } from '../app/start-watch.js';
import type { Config } from '../config/config-schema.js';
import { databasePath } from '../config/database-path.js';
import { loadConfigFile, parseConfig } from '../config/load-config.js';
import { ConfigError, describeError, UsageError } from '../errors.js';
import { createLogger } from '../log.js';
import { runSchedules } from '../sync/run-schedules.js';
import type { TenantReport } from '../sync/sync-tenant.js';
import { DEFAULT_WATCH } from '../vocabulary/watch-knobs.js';
import { collectionFlags } from './collection-flag.js';
import { printHelp } from './command-help.js';
import { EXIT } from './exit-codes.js';
import { parseFlags } from './parse-flags.js';
import { ProgressDisplay } from './progress-display.js';
import { SYNC_SPEC } from './specs/sync-spec.js';
import { untilStopped } from './stop-signal.js';
import { Committed, reportRun } from './sync-output.js';
import { configSchedules, cronSchedules, describeNext, scheduleLines } from './sync-schedule.js';

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
    if (!env.PARTNERS_API_KEY) {
      const which = tenants.length === 1 ? `tenant ${tenants[0]}` : `tenants ${tenants.join(', ')}`;
      throw new ConfigError(
        `set PARTNERS_API_KEY to the API key of ${which} (without --config, the key is read from it)`,
      );
    }
    config = parseConfig(
      { baseUrl, tenants: tenants.map((slug) => ({ slug, apiKeyEnv: 'PARTNERS_API_KEY' })) },
      'flags',
    );
  }
  const database = databasePath(config, env, values.db);
  const wait = values.wait ?? 0;
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

const parseSyncFlags = (argv: string[]) => parseFlags(argv, SYNC_SPEC);

/**
 * One sync of the invocation for a person or a script: its log above the progress shown on a terminal (`display`),
 * and what it committed, page by page, for the line a stop prints.
 */
async function syncWithProgress(
  inv: SyncInvocation,
  opts: { readonly signal: AbortSignal; readonly display?: ProgressDisplay | null; readonly app?: App },
): Promise<{ reports: TenantReport[]; failures: TenantFailure[]; failure: unknown; committed: Committed }> {
  const env = process.env;
  const display = opts.display ?? null;
  // With progress on the screen, the log is for what goes wrong (LOG_LEVEL still wins), and it prints above it.
  const log = createLogger({
    level: env.LOG_LEVEL || (display ? 'warn' : 'info'),
    ...(display ? { write: (line: string) => display.log(line) } : {}),
  });
  // Records committed, page by page: what a stopped run keeps (a collection cut short is in no report).
  const committed = new Committed();
  const result = await runSync(inv, {
    signal: opts.signal,
    env,
    log,
    ...(opts.app ? { app: opts.app } : {}),
    onProgress: (slug, p) => {
      committed.note(slug, p.collection, p.fetched);
      display?.progress(slug, p);
    },
    ...(display
      ? {
          onWaiting: (slug, w) => display.waiting(slug, w.collection, w.since),
          onTenantDone: (slug, report) => {
            const n = report.collections.reduce((sum, c) => sum + c.fetched, 0);
            display.finished(slug, `${report.collections.length} collections, ${n} records read`);
          },
        }
      : {}),
  });
  return { ...result, committed };
}

type SyncValues = ReturnType<typeof parseSyncFlags>['values'];
/** One sync run (of the invocation, or of a scheduled job's tenants and mode): its exit code. */
type RunOnce = (run: SyncInvocation, signal: AbortSignal) => Promise<number>;

export async function syncCommand(argv: string[]): Promise<number> {
  const { values, help } = parseSyncFlags(argv);
  if (help) return printHelp(SYNC_SPEC, help);
  const inv = resolveInvocation(values, process.env);
  if (values.enqueue) {
    if (values.schedule) throw new UsageError('--enqueue and --schedule do not go together');
    return await enqueueSyncs(inv, values);
  }
  // Progress only for a person watching: on a terminal, and not when asked for quiet or JSON.
  const terminal = process.stderr.isTTY === true && !values.json && !values.quiet;
  const once: RunOnce = async (run, signal) => {
    const display = terminal ? new ProgressDisplay() : null;
    try {
      const result = await syncWithProgress(run, { signal, display });
      display?.stop();
      return reportRun(result, run.config.baseUrl, values);
    } finally {
      display?.stop();
    }
  };
  const schedule = values.schedule;
  if (values.watch) {
    if (schedule !== undefined) throw new UsageError('--watch and --schedule do not go together');
    return await untilStopped((signal) => syncAndWatch(inv, values, signal));
  }
  return await untilStopped(async (signal) => {
    if (schedule === true) return await onConfigSchedules(inv, once, terminal, signal);
    if (schedule) return await onCron(schedule, inv, once, signal);
    return await once(inv, signal);
  });
}

/**
 * `sync --watch`: one sync, then the chosen tenants kept live on the same app (one budget per key) until SIGTERM or
 * SIGINT, which end it with exit 0 (docs/watch.md). Tenants whose config leaves `watch` off are watched with the
 * default knobs. A config or key refused by the first sync ends it with that sync's exit code.
 */
async function syncAndWatch(inv: SyncInvocation, values: SyncValues, signal: AbortSignal): Promise<number> {
  const log = createLogger();
  await using app = await openSyncApp(inv, process.env, log);
  const first = await syncWithProgress(inv, { signal, app });
  if (signal.aborted) return EXIT.OK;
  const code = reportRun(first, inv.config.baseUrl, values);
  if (code === EXIT.USAGE || code === EXIT.AUTH) return code;
  const watch = startWatch(app, {
    signal,
    fallback: DEFAULT_WATCH,
    ...(inv.collections.length > 0 ? { collections: inv.collections } : {}),
  });
  if (!values.quiet && !values.json)
    process.stderr.write(`understudy sync: watching ${watch.tenants} tenant(s); SIGTERM or Ctrl-C stops\n`);
  await watch.done;
  return EXIT.OK;
}

/** `sync --enqueue`: a sync job per chosen tenant on the worker queue; prints their ids. */
async function enqueueSyncs(inv: SyncInvocation, values: SyncValues): Promise<number> {
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

/**
 * `sync --schedule`: the config's own schedules. Between runs a terminal shows the next one, on one line kept up
 * to date. A stop during a run says what that run committed; a stop between runs says so.
 */
async function onConfigSchedules(inv: SyncInvocation, once: RunOnce, terminal: boolean, signal: AbortSignal) {
  let stoppedInRun = false;
  const show = (text: string) => process.stderr.write(text);
  await runSchedules(configSchedules(inv.config, inv.tenants), signal, {
    run: async (r, runSignal) => {
      await once({ ...inv, tenants: r.tenants, mode: r.mode }, runSignal);
      stoppedInRun = runSignal.aborted;
    },
    ...(terminal
      ? {
          onStart: (upcoming) => show(`${scheduleLines(inv.config, inv.tenants, upcoming, Date.now()).join('\n')}\n`),
          onIdle: (next) => show(`\r\x1b[K${next ? describeNext(next, Date.now()) : 'nothing scheduled'}`),
          onRunStart: () => show('\r\x1b[K'),
        }
      : {}),
  });
  if (!stoppedInRun)
    show(`${terminal ? '\r\x1b[K' : ''}understudy sync: stopped between runs; every run so far is committed\n`);
  return 0;
}

/**
 * `sync --schedule CRON`: every chosen tenant on each tick, each read in its own schedule.timezone (one schedule
 * per zone). Runs never overlap, across zones too (one mirror, one budget per key); a failed run is reported and
 * the schedule goes on.
 */
async function onCron(expression: string, inv: SyncInvocation, once: RunOnce, signal: AbortSignal) {
  await runSchedules(cronSchedules(expression, inv.config, inv.tenants, inv.mode), signal, {
    run: async (r, runSignal) => {
      await once({ ...inv, tenants: r.tenants }, runSignal);
    },
    onError: (err) => process.stderr.write(`understudy sync: ${describeError(err)}\n`),
  });
  return 0;
}
