import type { TenantConfig } from '../config/config-schema.js';
import { tenantSlug } from '../ids.js';
import type { Logger } from '../log.js';
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

/**
 * Makes Redis' job schedulers match `specs`: upserts each (idempotent, so every worker may run this at start)
 * and removes the ones no longer asked for. Returns the ids removed.
 */
export async function reconcileSchedules(
  queue: SyncQueue,
  specs: readonly ScheduleSpec[],
  log: Logger,
  retry?: RetryPolicy,
): Promise<string[]> {
  for (const spec of specs) {
    await queue.upsertJobScheduler(spec.id, spec.repeat, {
      name: 'sync-tenant',
      data: spec.data,
      opts: jobOptions(retry),
    });
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
  log.info({ schedules: [...wanted], removed }, 'schedules reconciled');
  return removed;
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
