import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from '../log.js';
import type { ScheduleClock } from '../sync/schedule-clock.js';
import { isRedisConnectionError } from './redis-settings.js';

const COUNTED = ['waiting', 'delayed', 'active', 'prioritized', 'paused'] as const;
type Counted = (typeof COUNTED)[number];

/** What Redis lost when it was emptied under a running worker, as the worker last saw it. */
export interface RedisLossReport {
  /** When the worker noticed (ISO). */
  readonly detectedAt: string;
  /** When the worker last found Redis whole (ISO); the data was lost after that. Null if it never checked. */
  readonly lastSeenAt: string | null;
  /** Jobs each queue held at `lastSeenAt`: they are gone (a job added after that point is gone too). */
  readonly queues: ({ readonly name: string } & Record<Counted, number>)[];
  /** The job schedulers recreated from the config. */
  readonly schedulesRecreated: readonly string[];
}

/** The key whose absence means Redis was emptied (FLUSHALL, or a restart without persistence). */
export const sentinelKey = (prefix: string): string => `${prefix}:worker:sentinel`;
/** Where the last loss report is kept for `understudy status` (a week). */
export const lossReportKey = (prefix: string): string => `${prefix}:worker:redis-lost`;
const REPORT_TTL_S = 7 * 24 * 3600;

export interface RedisLossWatchOptions {
  readonly redis: Redis;
  readonly prefix: string;
  /** Queues whose counts are snapshotted at each check, to say what was lost. */
  readonly queues: readonly Queue[];
  /** How often to look (also on every reconnect); default 5000 ms. */
  readonly intervalMs?: number;
  /** Where the looks tick (`wallClock` in a process). */
  readonly clock: Pick<ScheduleClock, 'every'>;
  /** Puts back what the worker can rebuild (its job schedulers); resolves to the scheduler ids recreated. */
  readonly recover: () => Promise<readonly string[]>;
  readonly log: Logger;
  /** Called with each report, after it is logged and stored. */
  readonly onLoss?: (report: RedisLossReport) => void;
}

export interface RedisLossWatch {
  /** Looks now: resolves to the report when a loss was found (and recovered from), else null. */
  check(): Promise<RedisLossReport | null>;
  /** Stops looking. */
  stop(): void;
}

/** Each queue's job counts now: what a loss would take with it. */
async function countJobs(queues: readonly Queue[]): Promise<RedisLossReport['queues']> {
  const out: RedisLossReport['queues'] = [];
  for (const q of queues) {
    const counts = await q.getJobCounts(...COUNTED);
    out.push({
      name: q.name,
      ...(Object.fromEntries(COUNTED.map((c) => [c, counts[c] ?? 0])) as Record<Counted, number>),
    });
  }
  return out;
}

/** What the watch knew at its last look: whether it set the sentinel, and when it last found Redis whole. */
interface LossWatchState {
  armed: boolean;
  lastSeen: { at: string; queues: RedisLossReport['queues'] } | null;
}

/** Recovers from a loss just found: recreates what it can, then logs, stores and reports what was lost. */
async function recoverFromLoss(opts: RedisLossWatchOptions, state: LossWatchState): Promise<RedisLossReport> {
  const { redis, prefix } = opts;
  let schedulesRecreated: readonly string[];
  try {
    schedulesRecreated = await opts.recover();
  } catch (err) {
    // Not recovered (a queue connection not back yet): take the sentinel away again so the next look retries.
    await redis.del(sentinelKey(prefix)).catch(() => undefined);
    throw err;
  }
  const report: RedisLossReport = {
    detectedAt: new Date().toISOString(),
    lastSeenAt: state.lastSeen?.at ?? null,
    queues: state.lastSeen?.queues ?? [],
    schedulesRecreated: [...schedulesRecreated],
  };
  opts.log.error(
    report,
    'Redis lost its data (flushed, or restarted without persistence): the queued jobs counted here are gone, ' +
      'schedules recreated, rate gates hold each key for one window',
  );
  await redis.set(lossReportKey(prefix), JSON.stringify(report), 'EX', REPORT_TTL_S);
  state.lastSeen = { at: report.detectedAt, queues: await countJobs(opts.queues) };
  opts.onLoss?.(report);
  return report;
}

/** One look: the sentinel is there (or this is the first look, which sets it), else Redis lost its data. */
async function lookForLoss(opts: RedisLossWatchOptions, state: LossWatchState): Promise<RedisLossReport | null> {
  // NX: a second worker starting on the same Redis keeps the first one's sentinel.
  const created = await opts.redis.set(sentinelKey(opts.prefix), new Date().toISOString(), 'NX');
  if (created !== null && state.armed) return recoverFromLoss(opts, state);
  state.armed = true;
  state.lastSeen = { at: new Date().toISOString(), queues: await countJobs(opts.queues) };
  return null;
}

/**
 * Notices Redis emptied under a running worker: a sentinel key set at start, looked for every `intervalMs` and on
 * each reconnect. When it is gone, the worker recreates what it can (schedules; the rate gates hold each key for a
 * window on their own), logs one error line saying what was lost, and stores that report for `status`.
 */
export function watchRedisLoss(opts: RedisLossWatchOptions): RedisLossWatch {
  const { redis, log } = opts;
  const state: LossWatchState = { armed: false, lastSeen: null };
  let running: Promise<RedisLossReport | null> | null = null;
  const check = (): Promise<RedisLossReport | null> => {
    running ??= lookForLoss(opts, state).finally(() => {
      running = null;
    });
    return running;
  };
  const tick = () => {
    check().catch((err: unknown) => {
      // Redis down is what the connection's own lines report (and a connection ended at stop fails its wait).
      if (!isRedisConnectionError(err)) log.warn({ reason: (err as Error).message }, 'Redis loss check failed');
    });
  };
  const ticker = opts.clock.every(opts.intervalMs ?? 5000, tick);
  // A reconnect is when a restart without persistence shows: look at once.
  redis.on('ready', tick);
  return {
    check,
    stop() {
      void ticker.stop();
      redis.off('ready', tick);
    },
  };
}

/** The last loss report stored by a worker, if any (for `status`). */
export async function readLossReport(redis: Redis, prefix: string): Promise<RedisLossReport | null> {
  const raw = await redis.get(lossReportKey(prefix));
  if (!raw) return null;
  try {
    return JSON.parse(raw) as RedisLossReport;
  } catch {
    return null;
  }
}
