import { existsSync } from 'node:fs';
import type { Config } from '../config/config-schema.js';
import { databasePath } from '../config/database-path.js';
import { loadConfigFile } from '../config/load-config.js';
import { describeError } from '../errors.js';
import { openSyncQueue, SYNC_QUEUE } from '../queue/queues.js';
import { type RedisLossReport, readLossReport } from '../queue/redis-loss.js';
import { redactRedisUrl, redisSettings, shortLivedRedis } from '../queue/redis-settings.js';
import { nextRuns } from '../queue/schedules.js';
import { openWritesQueue, WRITES_QUEUE } from '../queue/write-queue.js';
import { openSqliteStore } from '../store/sqlite-store.js';
import type { MirrorStatus } from '../store/store.js';
import { formatTable } from './format-table.js';
import { parseFlags } from './parse-flags.js';

const HELP = `usage: understudy status [--config FILE] [--db FILE] [--json]

Per tenant and collection: last success and its age, last error, live and deleted rows, next scheduled run;
per queue: waiting, active, delayed, failed and completed jobs. When Redis is unreachable (2 s), the mirror
part is still printed and Redis is reported unreachable; the exit code is 0 either way.

  --config FILE   JSON config (database, tenants, redis); REDIS_URL wins over redis.url
  --db FILE       SQLite file of the mirror (default: config database, UNDERSTUDY_DB, ./data/understudy.db)
  --json          print one JSON object on stdout
`;

const FLAGS = {
  config: { type: 'string' },
  db: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

const COUNTS = ['waiting', 'active', 'delayed', 'failed', 'completed', 'prioritized', 'paused'] as const;

export interface CollectionStatus {
  readonly name: string;
  readonly live: number;
  readonly deleted: number;
  readonly lastSuccessAt: string | null;
  readonly lastSuccessAgeSeconds: number | null;
  readonly lastError: string | null;
}

export interface StatusReport {
  readonly database: { readonly path: string; readonly exists: boolean };
  readonly tenants: {
    readonly slug: string;
    readonly nextRun: { readonly incremental: string | null; readonly full: string | null };
    readonly collections: CollectionStatus[];
  }[];
  readonly redis:
    | {
        readonly ok: true;
        readonly url: string;
        readonly prefix: string;
        /** The last time a worker found Redis emptied under it (kept a week), and what was lost then. */
        readonly lost: RedisLossReport | null;
      }
    | { readonly ok: false; readonly url: string; readonly error: string };
  readonly queues: ({ readonly name: string } & Record<(typeof COUNTS)[number], number>)[];
}

/** Gathers the status report: the mirror from SQLite, queues and schedules from Redis when it answers. */
export async function collectStatus(opts: {
  readonly config: Config | null;
  readonly database: string;
  readonly env: NodeJS.ProcessEnv;
  readonly now?: () => Date;
}): Promise<StatusReport> {
  const now = (opts.now ?? (() => new Date()))();
  const exists = existsSync(opts.database);
  let mirror: MirrorStatus[] = [];
  if (exists) {
    const store = await openSqliteStore(opts.database);
    try {
      mirror = await store.mirrorStatus();
    } finally {
      await store.close();
    }
  }
  const { url, prefix } = redisSettings(opts.config, opts.env);
  let redis: StatusReport['redis'];
  const queues: StatusReport['queues'] = [];
  let schedules: Awaited<ReturnType<typeof nextRuns>> = [];
  try {
    const conn = await shortLivedRedis(url, 2000, { enableOfflineQueue: true, maxRetriesPerRequest: 1 });
    const queue = openSyncQueue(conn, prefix);
    const writes = openWritesQueue(conn, prefix);
    queue.on('error', () => {});
    writes.on('error', () => {});
    try {
      for (const [name, q] of [
        [SYNC_QUEUE, queue],
        [WRITES_QUEUE, writes],
      ] as const) {
        const counts = await q.getJobCounts(...COUNTS);
        queues.push({
          name,
          ...Object.fromEntries(COUNTS.map((c) => [c, counts[c] ?? 0])),
        } as StatusReport['queues'][number]);
      }
      schedules = await nextRuns(queue);
      redis = { ok: true, url: redactRedisUrl(url), prefix, lost: await readLossReport(conn, prefix) };
    } finally {
      await queue.close().catch(() => {});
      await writes.close().catch(() => {});
      await conn.quit().catch(() => conn.disconnect());
    }
  } catch (err) {
    redis = { ok: false, url: redactRedisUrl(url), error: describeError(err) };
  }
  const slugs = [...new Set([...(opts.config?.tenants.map((t) => t.slug) ?? []), ...mirror.map((m) => m.tenant)])];
  const nextOf = (slug: string, mode: string) => {
    const next = schedules.find((s) => s.tenant === slug && s.mode === mode)?.next;
    return next ? new Date(next).toISOString() : null;
  };
  return {
    database: { path: opts.database, exists },
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
          lastSuccessAgeSeconds: m.lastSuccessAt
            ? Math.max(0, Math.round((now.getTime() - Date.parse(m.lastSuccessAt)) / 1000))
            : null,
          lastError: m.lastError,
        })),
    })),
    redis,
    queues,
  };
}

const age = (s: number | null): string => {
  if (s === null) return 'never';
  if (s < 120) return `${s}s ago`;
  if (s < 7200) return `${Math.round(s / 60)}m ago`;
  if (s < 172_800) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86_400)}d ago`;
};

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
    `${l.lastSeenAt ? `, whole at ${l.lastSeenAt}` : ''}. Lost: ${jobs || 'unknown'} (syncs run again on their ` +
    `next schedule; writes that were queued keep their write_log rows and must be enqueued again). Schedules recreated: ` +
    `${l.schedulesRecreated.join(', ') || 'none'}. Rate gates held each key for one window.`
  );
}

export function formatStatus(r: StatusReport): string {
  const rows = r.tenants.flatMap((t) =>
    (t.collections.length > 0 ? t.collections : [null]).map((c) => ({
      tenant: t.slug,
      collection: c?.name ?? '(nothing mirrored)',
      live: c?.live ?? 0,
      deleted: c?.deleted ?? 0,
      'last success': c ? age(c.lastSuccessAgeSeconds) : '',
      'last error': c?.lastError ?? '',
      'next incremental': t.nextRun.incremental ?? '',
      'next full': t.nextRun.full ?? '',
    })),
  );
  const out = [`mirror: ${r.database.path}${r.database.exists ? '' : ' (does not exist yet)'}`, formatTable(rows), ''];
  if (r.redis.ok) {
    out.push(`queues (${r.redis.url}, prefix ${r.redis.prefix}):`, formatTable(r.queues));
    if (r.redis.lost) out.push('', describeLoss(r.redis.lost));
  } else {
    out.push(`Redis unreachable (${r.redis.url}): ${r.redis.error}; queue and schedule status unavailable`);
  }
  return `${out.join('\n')}\n`;
}

export async function statusCommand(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, FLAGS);
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const config = values.config ? loadConfigFile(values.config) : null;
  const database = values.db ?? databasePath(config ?? {}, process.env);
  const report = await collectStatus({ config, database, env: process.env });
  process.stdout.write(values.json ? `${JSON.stringify(report)}\n` : formatStatus(report));
  return 0;
}
