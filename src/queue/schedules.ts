import type { TenantConfig } from '../config/config-schema.js';
import type { Logger } from '../log.js';
import { tenantSlug } from '../vocabulary/ids.js';
import { jobOptions, type RetryPolicy, type SyncQueue, type TenantJobData } from './queues.js';

/** One job scheduler: BullMQ fires each tick once, whichever worker is running. */
export interface ScheduleSpec {
  readonly id: string;
  readonly repeat: { readonly every: number } | { readonly pattern: string; readonly tz: string };
  readonly data: TenantJobData;
}

const INC = 'incremental.';
const FULL = 'full.';

/**
 * The schedulers a config asks for: per tenant with a `schedule`, an incremental tenant sync every N minutes
 * (0 turns it off) and a full one on `fullCron` in `timezone` (null turns it off). No `schedule`, no schedulers.
 */
export function schedulesFor(tenants: readonly TenantConfig[]): ScheduleSpec[] {
  const out: ScheduleSpec[] = [];
  for (const t of tenants) {
    const s = t.schedule;
    if (!s) continue;
    const tenant = tenantSlug(t.slug);
    if (s.incrementalEveryMinutes > 0) {
      out.push({
        id: `${INC}${t.slug}`,
        repeat: { every: s.incrementalEveryMinutes * 60_000 },
        data: { tenant, mode: 'incremental' },
      });
    }
    if (s.fullCron) {
      out.push({
        id: `${FULL}${t.slug}`,
        repeat: { pattern: s.fullCron, tz: s.timezone },
        data: { tenant, mode: 'full' },
      });
    }
  }
  return out;
}

/** What a reconciliation did: the schedulers removed, and those that could not be created (with why). */
export interface ReconcileResult {
  readonly removed: string[];
  readonly failed: { readonly id: string; readonly reason: string }[];
}

/**
 * Makes Redis' job schedulers match `specs`: upserts each (idempotent, so every worker may run this at start)
 * and removes the ones no longer asked for. A scheduler Redis or BullMQ refuses is logged and reported, and never
 * stops the others from being created (one tenant's bad schedule does not drop the rest).
 */
export async function reconcileSchedules(
  queue: SyncQueue,
  specs: readonly ScheduleSpec[],
  log: Logger,
  retry?: RetryPolicy,
): Promise<ReconcileResult> {
  const failed: ReconcileResult['failed'] = [];
  for (const spec of specs) {
    try {
      await queue.upsertJobScheduler(spec.id, spec.repeat, {
        name: 'sync-tenant',
        data: spec.data,
        opts: jobOptions(retry),
      });
    } catch (err) {
      // BullMQ parses the pattern and zone before Redis sees them (commands wait out outages instead of failing).
      const reason = (err as Error).message;
      log.error({ schedule: spec.id, tenant: spec.data.tenant, reason }, 'schedule refused; the others carry on');
      failed.push({ id: spec.id, reason });
    }
  }
  const wanted = new Set(specs.map((s) => s.id));
  const removed: string[] = [];
  const existing = await queue.getJobSchedulers(0, -1);
  for (const s of existing) {
    const id = s.id ?? s.key;
    if (!wanted.has(id)) {
      await queue.removeJobScheduler(id);
      removed.push(id);
    }
  }
  log.info(
    { schedules: specs.filter((s) => !failed.some((f) => f.id === s.id)).map((s) => s.id), removed, failed },
    'schedules reconciled',
  );
  return { removed, failed };
}

/** The next run of each tenant's schedulers, for `status`. */
export async function nextRuns(
  queue: SyncQueue,
): Promise<{ tenant: string; mode: string; id: string; next: number | null }[]> {
  const all = await queue.getJobSchedulers(0, -1);
  return all.map((s) => {
    const id = s.id ?? s.key;
    const mode = id.startsWith(FULL) ? 'full' : 'incremental';
    const tenant = id.startsWith(FULL) ? id.slice(FULL.length) : id.startsWith(INC) ? id.slice(INC.length) : id;
    return { tenant, mode, id, next: s.next ?? null };
  });
}
