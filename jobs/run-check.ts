import type { Job } from 'bullmq';
import type { Logger } from '../src/log.js';
import type { CheckJobData } from '../src/queue/check-schedules.js';
import { drifts, type TenantCheck } from '../src/sync/self-check.js';

export interface CheckProcessorDeps {
  /**
   * Runs the self-check of one tenant: null when the tenant is not in the config any more, `recent` when it was
   * checked less than a minute ago (the tick is skipped).
   */
  readonly checkTenant: (tenant: string, signal: AbortSignal) => Promise<TenantCheck | 'recent' | null>;
  readonly log: Logger;
}

/** The scheduled self-check: compares one tenant's mirror with the upstream and logs what drifted. */
export const runCheckProcessor =
  (deps: CheckProcessorDeps) => async (job: Job<CheckJobData>, _token?: string, signal?: AbortSignal) => {
    const tenant = job.data.tenant;
    const check = await deps.checkTenant(tenant, signal ?? new AbortController().signal);
    if (!check) return { skipped: 'tenant not in the config' };
    if (check === 'recent') {
      deps.log.debug({ tenant }, 'self-check skipped: the tenant was checked less than a minute ago');
      return { skipped: 'checked less than a minute ago' };
    }
    const drifting = check.collections.filter(drifts);
    const summary = {
      tenant,
      checked: check.collections.length,
      drifting: drifting.map((c) => `${c.collection}${c.variant === 'published' ? '' : `/${c.variant}`} ${c.drift}`),
      skipped: check.skipped.length,
    };
    if (drifting.length > 0) deps.log.warn(summary, 'self-check: the mirror drifts from the upstream');
    else deps.log.info(summary, 'self-check: no drift');
    return summary;
  };
