import { createApp, type ReaderApp } from '../app/create-app.js';
import { databasePath } from '../config/database-path.js';
import { loadConfigFile } from '../config/load-config.js';
import { describeError, UsageError } from '../errors.js';
import { CHECKS_QUEUE, openCheckQueue } from '../queue/check-schedules.js';
import { errorsFailTheCalls } from '../queue/error-listeners.js';
import { openSyncQueue, SYNC_QUEUE } from '../queue/queues.js';
import { type RedisLossReport, readLossReport } from '../queue/redis-loss.js';
import { redactRedisUrl } from '../queue/redis-settings.js';
import { nextRuns } from '../queue/schedules.js';
import { recentServeProcesses, type ServeProcess } from '../queue/serve-processes.js';
import { openWebhookQueue, WEBHOOKS_QUEUE } from '../queue/webhook-queue.js';
import { openWritesQueue, WRITES_QUEUE } from '../queue/write-queue.js';
import { databaseMissing, mirrorMissing, shownDatabase } from '../store/dialect.js';
import { WATCH_STATUS_EVERY_MS } from '../sync/watch-port.js';
import { changeFeedStatus, formatChangeFeed, type LastCheck, type WebhookStatus } from './change-status.js';
import { clockTime } from './clock-time.js';
import { printHelp } from './command-help.js';
import { EXIT } from './exit-codes.js';
import { formatTable } from './format-table.js';
import { inWords, parseDuration } from './parse-duration.js';
import { parseFlags } from './parse-flags.js';
import { STATUS_SPEC } from './specs/status-spec.js';

const COUNTS = ['waiting', 'active', 'delayed', 'failed', 'completed', 'prioritized', 'paused'] as const;

export interface CollectionStatus {
  readonly name: string;
  readonly live: number;
  readonly deleted: number;
  readonly lastSuccessAt: string | null;
  readonly lastSuccessAgeSeconds: number | null;
  /**
   * Seconds since the mirror of this collection was last known as fresh as the upstream: the later of its last
   * successful run and its last successful watch probe (what `status --check --max-age` measures); null with neither.
   */
  readonly freshAgeSeconds: number | null;
  readonly lastError: string | null;
  /** When the last run failed (ISO); null with no failure, or one recorded before failures had a time. */
  readonly lastErrorAt: string | null;
  /**
   * When a watch probe first found the collection as fresh as the upstream after that failure (ISO); null otherwise.
   * Set, the failure no longer counts for `status --check` (docs/watch.md); `lastError` still says what it was.
   */
  readonly freshSince: string | null;
  /** The collection's watch (config `watch`, docs/watch.md); null when no worker has watched it. */
  readonly watch: {
    /** When it was last probed (ISO), or null before the first probe. */
    readonly lastProbeAt: string | null;
    /** When the last probe that found a change upstream was made (ISO), or null. */
    readonly lastChangeAt: string | null;
    /** When the last probe that succeeded was made (ISO), or null: the mirror was then as fresh as the upstream. */
    readonly lastFreshAt: string | null;
    /** The current probe interval, in seconds. */
    readonly probeIntervalSeconds: number;
    /** Probes made by the current watcher. */
    readonly probes: number;
    /** The watching process (host:pid:run). */
    readonly holder: string;
    /** When the watcher last wrote this (every 5 s while it watches): older than a minute, nobody watches now. */
    readonly updatedAt: string;
  } | null;
}

export interface StatusReport {
  readonly database: { readonly path: string; readonly exists: boolean };
  readonly tenants: {
    readonly slug: string;
    readonly nextRun: { readonly incremental: string | null; readonly full: string | null };
    readonly collections: CollectionStatus[];
    /** The tenant's last self-check (`understudy check`, or the worker's `schedule.checkCron`). */
    readonly lastCheck: LastCheck | null;
  }[];
  /** Webhook endpoints known to the mirror: position, last delivery and error, disabled by a 410. */
  readonly webhooks: WebhookStatus[];
  /** Looked for only when configured (config `redis` or `REDIS_URL`). */
  readonly redis:
    | {
        readonly ok: true;
        readonly configured: true;
        readonly url: string;
        readonly prefix: string;
        /** The last time a worker found Redis emptied under it (kept a week), and what was lost then. */
        readonly lost: RedisLossReport | null;
      }
    | { readonly ok: false; readonly configured: true; readonly url: string; readonly error: string }
    | { readonly ok: false; readonly configured: false };
  readonly queues: ({ readonly name: string } & Record<(typeof COUNTS)[number], number>)[];
  /** The `understudy serve` processes seen in the last minute (from Redis); null when Redis is not there to ask. */
  readonly serve: readonly ServeProcess[] | null;
}

/**
 * Gathers the status report: the mirror read-only from the app; queues and schedules from Redis when it is
 * configured (config `redis` or `REDIS_URL`: whatever answers on the default port is not this deployment's Redis
 * otherwise) and answers.
 */
export async function collectStatus(app: ReaderApp, opts: { readonly now?: () => Date } = {}): Promise<StatusReport> {
  const now = (opts.now ?? (() => new Date()))();
  const mirror = await app.mirror.mirrorStatus();
  const feed = await changeFeedStatus(app.mirror.changes);
  const { redis, queues, schedules, serve } =
    app.config?.redis || app.env.REDIS_URL
      ? await queueStatus(app, now.getTime())
      : { redis: NO_REDIS, queues: [], schedules: [], serve: null };
  const slugs = [...new Set([...(app.config?.tenants.map((t) => t.slug) ?? []), ...mirror.map((m) => m.tenant)])];
  const nextOf = (slug: string, mode: string) => {
    const next = schedules.find((s) => s.tenant === slug && s.mode === mode)?.next;
    return next ? new Date(next).toISOString() : null;
  };
  return {
    database: { path: app.databasePath, exists: true },
    tenants: slugs.map((slug) => ({
      slug,
      nextRun: { incremental: nextOf(slug, 'incremental'), full: nextOf(slug, 'full') },
      collections: mirror
        .filter((m) => m.tenant === slug)
        .map((m) => ({
          name: m.collection,
          live: m.live,
          deleted: m.deleted,
          lastSuccessAt: m.lastSuccessAt,
          lastSuccessAgeSeconds: ageSeconds(m.lastSuccessAt, now),
          freshAgeSeconds: ageSeconds(latest(m.lastSuccessAt, m.watch?.lastFreshAt ?? null), now),
          lastError: m.lastError,
          lastErrorAt: m.lastErrorAt,
          freshSince: m.freshSince,
          watch: m.watch
            ? {
                lastProbeAt: m.watch.lastProbeAt,
                lastChangeAt: m.watch.lastChangeAt,
                lastFreshAt: m.watch.lastFreshAt,
                probeIntervalSeconds: Math.round(m.watch.intervalMs / 100) / 10,
                probes: m.watch.probes,
                holder: m.watch.holder,
                updatedAt: m.watch.updatedAt,
              }
            : null,
        })),
      lastCheck: feed.lastChecks.get(slug) ?? null,
    })),
    webhooks: feed.webhooks,
    redis,
    queues,
    serve,
  };
}

const NO_REDIS: StatusReport['redis'] = { ok: false, configured: false };

interface QueueStatus {
  readonly redis: StatusReport['redis'];
  readonly queues: StatusReport['queues'];
  readonly schedules: Awaited<ReturnType<typeof nextRuns>>;
  readonly serve: StatusReport['serve'];
}

/**
 * The queues' counts, the next scheduled runs, what Redis lost and the serve processes alive, from the configured
 * Redis; its error if any.
 */
async function queueStatus(app: ReaderApp, now: number): Promise<QueueStatus> {
  const { url, prefix } = app.redisSettings;
  try {
    const conn = await app.redis();
    const named = [
      [SYNC_QUEUE, openSyncQueue(conn, prefix, errorsFailTheCalls)],
      [WRITES_QUEUE, openWritesQueue(conn, prefix, errorsFailTheCalls)],
      [WEBHOOKS_QUEUE, openWebhookQueue(conn, prefix, errorsFailTheCalls)],
      [CHECKS_QUEUE, openCheckQueue(conn, prefix, errorsFailTheCalls)],
    ] as const;
    try {
      const queues: StatusReport['queues'] = [];
      for (const [name, q] of named) {
        const counts = await q.getJobCounts(...COUNTS);
        queues.push({
          name,
          ...Object.fromEntries(COUNTS.map((c) => [c, counts[c] ?? 0])),
        } as StatusReport['queues'][number]);
      }
      const schedules = await nextRuns(named[0][1]);
      const lost = await readLossReport(conn, prefix);
      const serve = await recentServeProcesses(conn, prefix, now);
      return {
        redis: { ok: true, configured: true, url: redactRedisUrl(url), prefix, lost },
        queues,
        schedules,
        serve,
      };
    } finally {
      for (const [, q] of named) await q.close().catch(() => {});
    }
  } catch (err) {
    return {
      redis: { ok: false, configured: true, url: redactRedisUrl(url), error: describeError(err) },
      queues: [],
      schedules: [],
      serve: null,
    };
  }
}

/** Every time in the table one way: relative to now (`3 min ago`, `in 4 h 05 min`). */
const ago = (s: number | null): string => (s === null ? 'never' : `${inWords(s * 1000).slice(3)} ago`);
const until = (iso: string | null, now: number): string => (iso === null ? '' : inWords(Date.parse(iso) - now));

/** The table fits this many columns: the last error is cut to what is left. */
const WIDTH = 100;

/** One paragraph on a loss of Redis' data: when, what was queued then, what was recreated. */
export function describeLoss(l: RedisLossReport): string {
  const jobs = l.queues
    .map(
      (q) =>
        `${q.waiting + q.delayed + q.prioritized + q.paused} waiting/delayed and ${q.active} active ${q.name} jobs`,
    )
    .join(', ');
  return (
    `Redis lost its data (flushed, or restarted without persistence): noticed at ${l.detectedAt}` +
    `${l.lastSeenAt ? `, last seen intact at ${l.lastSeenAt}` : ''}. Lost: ${jobs || 'unknown'} (syncs run again on their ` +
    `next schedule; writes that were queued keep their write_log rows and must be enqueued again). Schedules recreated: ` +
    `${l.schedulesRecreated.join(', ') || 'none'}. Rate gates held each key for one window.`
  );
}

/**
 * A collection's watch in the table: its probe interval and last probe (`every 5 s, probed 3 s ago`); once the next
 * probe is late, since when it is due instead (`every 5 s, due 27 s ago`); or that nobody watches it now.
 */
function describeWatch(w: NonNullable<CollectionStatus['watch']>, now: number): string {
  if (now - Date.parse(w.updatedAt) > WATCH_STALE_MS) return `not watched since ${ago(secondsSince(w.updatedAt, now))}`;
  const every = `every ${w.probeIntervalSeconds} s`;
  if (!w.lastProbeAt) return every;
  const due = Date.parse(w.lastProbeAt) + w.probeIntervalSeconds * 1000;
  // A probe made when due reaches the row at the watcher's next write: only past that is it late.
  if (now - due > WATCH_STATUS_EVERY_MS) return `${every}, due ${ago(Math.round((now - due) / 1000))}`;
  return `${every}, probed ${ago(secondsSince(w.lastProbeAt, now))}`;
}

/** A watch row not written for this long has no live watcher (it writes every 5 s). */
const WATCH_STALE_MS = 60_000;
const secondsSince = (iso: string, now: number) => Math.max(0, Math.round((now - Date.parse(iso)) / 1000));

/**
 * A failure a watch probe has cleared, in words that are never cut: `failed 07:43, fresh since 07:44`; null for any
 * other collection.
 */
function clearedFailure(c: CollectionStatus | null, now: number): string | null {
  if (!c?.lastError || !c.freshSince) return null;
  const failed = c.lastErrorAt ? `failed ${clockTime(c.lastErrorAt, now)}, ` : '';
  return `${failed}fresh since ${clockTime(c.freshSince, now)}`;
}

export function formatStatus(r: StatusReport, now = Date.now()): string {
  const watched = r.tenants.some((t) => t.collections.some((c) => c.watch !== null));
  const rows = r.tenants.flatMap((t) =>
    (t.collections.length > 0 ? t.collections : [null]).map((c) => {
      const cleared = clearedFailure(c, now);
      return {
        tenant: t.slug,
        collection: c?.name ?? '(nothing mirrored)',
        live: c?.live ?? 0,
        deleted: c?.deleted ?? 0,
        'last success': c ? ago(c.lastSuccessAgeSeconds) : '',
        ...(watched ? { watch: c?.watch ? describeWatch(c.watch, now) : '' } : {}),
        'last error': cleared ? `${cleared}: ${c?.lastError}` : (c?.lastError ?? ''),
        kept: cleared?.length ?? 0,
      };
    }),
  );
  // The error column gets what the others leave of WIDTH, at least 12 characters; a cleared failure's words stay.
  const others =
    rows.length > 0
      ? (formatTable(rows.map(({ 'last error': _e, kept: _k, ...rest }) => rest)).split('\n')[0]?.length ?? 0)
      : 0;
  const room = Math.max(12, WIDTH - others - 2);
  const clip = (e: string, kept: number) =>
    e.length <= room ? e : room - 1 > kept + 2 ? `${e.slice(0, room - 1)}…` : e.slice(0, kept);
  const table = formatTable(rows.map(({ kept, ...row }) => ({ ...row, 'last error': clip(row['last error'], kept) })));
  const out = [`mirror: ${r.database.path}`, table, ...formatChangeFeed(r.tenants, r.webhooks), ''];
  const next = r.tenants
    .filter((t) => t.nextRun.incremental || t.nextRun.full)
    .map(
      (t) =>
        `  ${t.slug}: ${[
          t.nextRun.incremental ? `incremental ${until(t.nextRun.incremental, now)}` : '',
          t.nextRun.full ? `full ${until(t.nextRun.full, now)}` : '',
        ]
          .filter(Boolean)
          .join(', ')}`,
    );
  if (r.redis.ok) {
    if (next.length > 0) out.push('next runs:', ...next, '');
    out.push(`queues (${r.redis.url}, prefix ${r.redis.prefix}):`, formatTable(r.queues));
    if (r.redis.lost) out.push('', describeLoss(r.redis.lost));
    out.push('', ...formatServe(r.serve ?? [], now));
  } else if (r.redis.configured) {
    // The error names Redis and where already (`Redis unreachable at …: connect ECONNREFUSED …`): said once.
    const what = r.redis.error.startsWith('Redis') ? r.redis.error : `Redis error (${r.redis.url}): ${r.redis.error}`;
    out.push(`${what}; queue, schedule and serve process status unavailable`);
  }
  return `${out.join('\n').replace(/\n+$/, '')}\n`;
}

/** The serve processes seen in the last minute, one row each, or one line saying there are none. */
function formatServe(procs: readonly ServeProcess[], now: number): string[] {
  if (procs.length === 0) return ['serve: no process seen in the last minute'];
  const rows = procs.map((p) => ({
    host: p.host,
    pid: p.pid,
    url: p.url,
    started: clockTime(p.startedAt, now),
    'last seen': ago(secondsSince(p.lastSeenAt, now)),
  }));
  return ['serve processes (seen in the last minute):', formatTable(rows)];
}

/** One finding of `status --check`: its exit code and its line. */
export interface CheckFinding {
  readonly exit: number;
  readonly text: string;
}

/** Whole seconds from `at` (ISO) to `now`, never negative; null without `at`. */
const ageSeconds = (at: string | null, now: Date): number | null =>
  at ? Math.max(0, Math.round((now.getTime() - Date.parse(at)) / 1000)) : null;

/** The later of two ISO instants (either may be missing). */
const latest = (a: string | null, b: string | null): string | null =>
  a === null ? b : b === null ? a : Date.parse(a) >= Date.parse(b) ? a : b;

/**
 * What `status --check` finds wrong, worst first: the mirror missing or a configured tenant with nothing in it
 * (7), a collection whose last run failed (5), a last success older than `maxAgeSeconds` or none at all (6).
 */
export function checkStatus(r: StatusReport, maxAgeSeconds: number | null): CheckFinding[] {
  if (!r.database.exists) return [{ exit: EXIT.CHECK_MISSING, text: `mirror ${r.database.path} does not exist` }];
  const found: CheckFinding[] = [];
  for (const t of r.tenants) {
    if (t.collections.length === 0) found.push({ exit: EXIT.CHECK_MISSING, text: `${t.slug}: nothing mirrored yet` });
    for (const c of t.collections) {
      // A failure a watch probe has since cleared (`freshSince`) is no finding: only its age may be.
      if (c.lastError && !c.freshSince)
        found.push({ exit: EXIT.CHECK_FAILED, text: `${t.slug} ${c.name}: last run failed: ${c.lastError}` });
      // Fresh is the later of a successful run and a successful watch probe: a watched collection whose schedule
      // only runs a nightly pass stays green while watch finds it as fresh as the upstream.
      else if (maxAgeSeconds !== null && c.freshAgeSeconds === null)
        found.push({ exit: EXIT.CHECK_STALE, text: `${t.slug} ${c.name}: no successful sync yet` });
      else if (maxAgeSeconds !== null && (c.freshAgeSeconds ?? 0) > maxAgeSeconds)
        found.push({
          exit: EXIT.CHECK_STALE,
          text:
            `${t.slug} ${c.name}: last success ${ago(c.lastSuccessAgeSeconds)}` +
            `${c.watch?.lastFreshAt ? `, last fresh watch probe ${ago(c.freshAgeSeconds)}` : ''}, older than --max-age (${maxAgeSeconds} s)`,
        });
    }
  }
  const rank = (e: number) => [EXIT.CHECK_MISSING, EXIT.CHECK_FAILED, EXIT.CHECK_STALE].indexOf(e as 5 | 6 | 7);
  return found.sort((a, b) => rank(a.exit) - rank(b.exit));
}

export async function statusCommand(argv: string[]): Promise<number> {
  const { values, help } = parseFlags(argv, STATUS_SPEC);
  if (help) return printHelp(STATUS_SPEC, help);
  if (values['max-age'] !== undefined && !values.check) throw new UsageError('--max-age goes with --check');
  const maxAge = values['max-age'] === undefined ? null : parseDuration(values['max-age'], '--max-age');
  const config = values.config ? loadConfigFile(values.config) : null;
  const database = values.db ?? databasePath(config ?? {}, process.env);
  // A health check reports a missing mirror as a finding (exit 7), a SQLite file or a PostgreSQL database alike;
  // opening it read-only would refuse it (exit 2).
  const missing = (): number => {
    const found: CheckFinding = { exit: EXIT.CHECK_MISSING, text: `mirror ${shownDatabase(database)} does not exist` };
    if (values.json) {
      const check = { ok: false, exitCode: found.exit, findings: [found.text] };
      process.stdout.write(`${JSON.stringify({ database: { path: database, exists: false }, check })}\n`);
    }
    process.stderr.write(`understudy status: ${found.text}\n`);
    return found.exit;
  };
  if (values.check && mirrorMissing(database)) return missing();
  let opened: ReaderApp;
  try {
    opened = await createApp(config, process.env, { profile: 'reader', database });
  } catch (err) {
    if (values.check && databaseMissing(err)) return missing();
    throw err;
  }
  await using app = opened;
  const report = await collectStatus(app);
  const findings = values.check ? checkStatus(report, maxAge) : [];
  const exit = findings[0]?.exit ?? EXIT.OK;
  if (values.json) {
    const check = values.check
      ? { check: { ok: exit === EXIT.OK, exitCode: exit, findings: findings.map((f) => f.text) } }
      : {};
    process.stdout.write(`${JSON.stringify({ ...report, ...check })}\n`);
  } else if (!values.quiet) process.stdout.write(formatStatus(report));
  for (const f of findings) process.stderr.write(`understudy status: ${f.text}\n`);
  return exit;
}
