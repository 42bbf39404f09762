import { type ConnectionOptions, Queue } from 'bullmq';
import type { TenantConfig } from '../config/config-schema.js';
import type { Logger } from '../log.js';
import type { ErrorListener } from './error-listeners.js';

/** The queue scheduled self-checks run on (one job per tenant and tick). */
export const CHECKS_QUEUE = 'checks';

export interface CheckJobData {
  readonly tenant: string;
}

export type CheckQueue = Queue<CheckJobData, unknown, string>;

/** Opens the self-check queue, `onError` listening to its `error` events. */
export const openCheckQueue = (connection: ConnectionOptions, prefix: string, onError: ErrorListener): CheckQueue =>
  new Queue<CheckJobData, unknown, string>(CHECKS_QUEUE, { connection, prefix }).on('error', onError);

const PREFIX = 'check.';

/** One job scheduler per tenant with a `schedule.checkCron`, read in its `schedule.timezone`. */
export const checkSchedulesFor = (tenants: readonly TenantConfig[]) =>
  tenants.flatMap((t) =>
    t.schedule?.checkCron
      ? [{ id: `${PREFIX}${t.slug}`, pattern: t.schedule.checkCron, tz: t.schedule.timezone, tenant: t.slug }]
      : [],
  );

/**
 * Makes the check queue's schedulers match the config (idempotent: every worker runs it at start and on reload).
 * A scheduler BullMQ refuses is logged and the others are still made.
 */
export async function reconcileCheckSchedules(
  queue: CheckQueue,
  tenants: readonly TenantConfig[],
  log: Logger,
): Promise<void> {
  const specs = checkSchedulesFor(tenants);
  for (const s of specs) {
    try {
      await queue.upsertJobScheduler(
        s.id,
        { pattern: s.pattern, tz: s.tz },
        {
          name: 'check-tenant',
          data: { tenant: s.tenant },
          opts: { attempts: 1, removeOnComplete: { count: 50 }, removeOnFail: { count: 200 } },
        },
      );
    } catch (err) {
      log.error({ schedule: s.id, reason: (err as Error).message }, 'check schedule refused; the others carry on');
    }
  }
  const wanted = new Set(specs.map((s) => s.id));
  for (const s of await queue.getJobSchedulers(0, -1)) {
    const id = s.id ?? s.key;
    if (!wanted.has(id)) await queue.removeJobScheduler(id);
  }
}
