import { type App, createApp } from '../app/create-app.js';
import type { Config } from '../config/config-schema.js';
import { databasePath } from '../config/database-path.js';
import { loadConfigFile } from '../config/load-config.js';
import { resolveTenants } from '../config/resolve-tenants.js';
import { describeError } from '../errors.js';
import { createLogger, type Logger } from '../log.js';
import { addSyncJob } from '../queue/enqueue-sync.js';
import { redisConfigured } from '../queue/shared-budget.js';
import { workersListening } from '../queue/workers-listening.js';
import {
  type CheckRow,
  checkTenant,
  driftingCollections,
  drifts,
  dropRowsAheadOfUpstream,
  type TenantCheck,
} from '../sync/self-check.js';
import { syncTenant } from '../sync/sync-tenant.js';
import type { CollectionSlug } from '../vocabulary/collections.js';
import { printHelp } from './command-help.js';
import { formatTable } from './format-table.js';
import { parseFlags } from './parse-flags.js';
import { CHECK_SPEC } from './specs/check-spec.js';

interface Repair {
  readonly slug: string;
  readonly collection: CollectionSlug;
  readonly how: 'queued' | 'synced' | 'failed';
  readonly job?: string;
  readonly error?: string;
}

/** A check row as `--json` shows it: the id figures and samples only when ids were compared. */
const publicRow = (c: CheckRow) => ({
  collection: c.collection,
  variant: c.variant,
  local: c.local,
  upstream: c.upstream,
  drift: c.drift,
  ...(c.missing === null ? {} : { missing: c.missing, extra: c.extra, stale: c.stale }),
  ...(c.unpublished === undefined ? {} : { unpublished: c.unpublished }),
  ...(c.missingIds ? { missingIds: c.missingIds, extraIds: c.extraIds, staleIds: c.staleIds } : {}),
  ...(c.unpublishedIds ? { unpublishedIds: c.unpublishedIds } : {}),
});

const publicCheck = (t: TenantCheck) => ({
  slug: t.slug,
  requests: t.requests,
  collections: t.collections.map(publicRow),
});

/** The counts as a table, then a line per kind of difference naming its first ids. */
function table(checks: readonly TenantCheck[]): string {
  const rows = checks.flatMap((t) =>
    t.collections.map((c) => {
      const { missingIds: _m, extraIds: _e, staleIds: _s, unpublishedIds: _u, ...counts } = c;
      return c.missing === null
        ? { tenant: t.slug, ...counts, missing: undefined, extra: undefined, stale: undefined }
        : { tenant: t.slug, ...counts };
    }),
  );
  const lines: string[] = [];
  for (const t of checks)
    for (const c of t.collections) {
      const name = `${t.slug} ${c.collection}${c.variant === 'published' ? '' : `/${c.variant}`}`;
      for (const [kind, n, ids] of [
        ['missing', c.missing, c.missingIds],
        ['extra', c.extra, c.extraIds],
        ['stale', c.stale, c.staleIds],
        ['unpublished (extra, a draft upstream)', c.unpublished, c.unpublishedIds],
      ] as const) {
        if (!n || !ids) continue;
        lines.push(`${name} ${kind}: ${ids.join(', ')}${n > ids.length ? ` (and ${n - ids.length} more)` : ''}`);
      }
    }
  return [formatTable(rows), ...(lines.length > 0 ? ['', ...lines] : [])].join('\n');
}

const hasDrift = (checks: readonly TenantCheck[]) => checks.some((t) => driftingCollections(t).length > 0);

/** `--quiet`: nothing when the mirror matches, else one stderr line per collection that drifts (the exit code is 1). */
function sayDrift(checks: readonly TenantCheck[]): void {
  for (const t of checks)
    for (const c of t.collections) {
      if (!drifts(c)) continue;
      const ids =
        c.missing === null
          ? ''
          : ` (missing ${c.missing}, extra ${c.extra}, stale ${c.stale}${c.unpublished ? `, unpublished ${c.unpublished}` : ''})`;
      const name = `${t.slug} ${c.collection}${c.variant === 'published' ? '' : `/${c.variant}`}`;
      process.stderr.write(
        `understudy check: ${name}: ${c.local} local, ${c.upstream} upstream, drift ${c.drift}${ids}\n`,
      );
    }
}

async function checkAll(
  app: App,
  slugs: readonly string[],
  signal: AbortSignal,
  countsOnly: boolean,
  only?: Map<string, CollectionSlug[]>,
) {
  const out: TenantCheck[] = [];
  for (const slug of slugs) {
    const t = app.tenant(slug);
    if (!t) continue;
    const collections = only?.get(slug);
    if (only && !collections?.length) continue;
    const routes = await app.routesOf(slug, signal);
    const target = collections ? { ...t.target, collections } : t.target;
    out.push(
      await checkTenant(
        { client: t.client, store: app.store, checks: app.changes, signal, countsOnly },
        target,
        routes,
      ),
    );
  }
  return out;
}

export async function checkCommand(argv: string[]): Promise<number> {
  const { values, help } = parseFlags(argv, CHECK_SPEC);
  if (help) return printHelp(CHECK_SPEC, help);
  const config = loadConfigFile(values.config);
  const env = process.env;
  const tenants = values.tenant ?? [];
  const slugs = resolveTenants(config, env, tenants).map((t) => t.slug as string);
  const log = createLogger({ level: env.LOG_LEVEL || 'warn' });
  const database = databasePath(config, env, values.db);
  // One budget per key: with Redis configured, the workers' shared gate (unless --local-budget).
  await using app = await createApp(config, env, {
    profile: 'sync',
    log,
    database,
    tenants,
    gates: values['local-budget'] ? 'memory' : 'shared',
  });
  const signal = new AbortController().signal;
  const countsOnly = values.counts === true;
  const checks = await checkAll(app, slugs, signal, countsOnly);
  for (const t of checks)
    for (const s of t.skipped)
      process.stderr.write(`understudy check: ${t.slug} ${s.collection}: not compared (${s.reason})\n`);
  const quiet = values.quiet === true && values.json !== true;
  if (!values.repair || !hasDrift(checks)) {
    if (quiet) sayDrift(checks);
    else
      process.stdout.write(
        values.json ? `${JSON.stringify({ tenants: checks.map(publicCheck) })}\n` : `${table(checks)}\n`,
      );
    return hasDrift(checks) ? 1 : 0;
  }
  const drifting = new Map(checks.map((t) => [t.slug, driftingCollections(t)]));
  const { repair, queued } = await repairDrift({ app, config, env, database, log, signal }, checks, drifting);
  const after = queued ? null : await checkAll(app, slugs, signal, countsOnly, drifting);
  if (quiet) sayDrift(after ?? []);
  else printRepair(checks, repair, after, values.json === true);
  const failed = repair.filter((r) => r.how === 'failed');
  for (const f of failed)
    process.stderr.write(`understudy check: ${f.slug} ${f.collection}: repair failed: ${describeError(f.error)}\n`);
  return failed.length > 0 || (after !== null && hasDrift(after)) ? 1 : 0;
}

interface RepairContext {
  readonly app: App;
  readonly config: Config;
  readonly env: NodeJS.ProcessEnv;
  readonly database: string;
  readonly log: Logger;
  readonly signal: AbortSignal;
}

/**
 * `--repair`: per drifting collection, the rows ahead of the upstream dropped, then a full pass: queued for the
 * workers when Redis is configured and a worker listens, else run here. Says what it did, and whether it queued.
 */
async function repairDrift(
  ctx: RepairContext,
  checks: readonly TenantCheck[],
  drifting: ReadonlyMap<string, CollectionSlug[]>,
): Promise<{ repair: Repair[]; queued: boolean }> {
  const { app, config, env, database } = ctx;
  const repair: Repair[] = [];
  await using queue = redisConfigured(config, env)
    ? await createApp(config, env, { profile: 'queue', database }).catch(() => null)
    : null;
  const queued = queue !== null && (await workersListening(queue.redis, queue.redisSettings.prefix));
  for (const [slug, collections] of drifting) {
    if (collections.length === 0) continue;
    // Rows newer than the upstream's record: a full pass would keep them (newer wins), so they go first.
    const check = checks.find((t) => t.slug === slug);
    if (check) await dropRowsAheadOfUpstream(app.store, check);
    if (queue && queued) {
      const job = await addSyncJob(queue.redis, queue.redisSettings.prefix, {
        tenant: slug,
        collections,
        mode: 'full',
      });
      for (const collection of collections) repair.push({ slug, collection, how: 'queued', job });
    } else repair.push(...(await fullPassHere(ctx, slug, collections)));
  }
  return { repair, queued };
}

/** A full pass of the tenant's drifting collections, here and now. */
async function fullPassHere(ctx: RepairContext, slug: string, collections: CollectionSlug[]): Promise<Repair[]> {
  const { app, signal } = ctx;
  const t = app.tenant(slug);
  if (!t) return [];
  const report = await syncTenant(
    app.syncDeps(t.client, { log: ctx.log }),
    { ...t.target, collections },
    'full',
    signal,
    await app.routesOf(slug, signal),
  );
  return report.collections.map((c) => ({
    slug,
    collection: c.name,
    how: c.error ? 'failed' : 'synced',
    ...(c.error ? { error: c.error } : {}),
  }));
}

function printRepair(checks: TenantCheck[], repair: Repair[], after: TenantCheck[] | null, json: boolean): void {
  if (json) {
    const out = { tenants: checks.map(publicCheck), repair, ...(after ? { after: after.map(publicCheck) } : {}) };
    process.stdout.write(`${JSON.stringify(out)}\n`);
    return;
  }
  process.stdout.write(`${table(checks)}\n\n`);
  for (const r of repair)
    process.stdout.write(
      `${r.slug} ${r.collection}: full pass ${r.how === 'queued' ? `queued (job ${r.job})` : r.how}${r.error ? `: ${r.error}` : ''}\n`,
    );
  if (after) process.stdout.write(`\nafter the repair:\n${table(after)}\n`);
}
