import { DelayedError, type Job } from 'bullmq';
import type { Logger } from '../src/log.js';
import type { GateParkedError } from '../src/partners/gate-parking.js';

/**
 * Gives a sync job's worker slot back after it waited too long for its key's budget: the job is delayed by the
 * parking time and no attempt is spent (BullMQ counts an attempt only for a failure). Committed pages stay; the
 * next run resumes from them.
 */
export async function parkJob(
  job: Job,
  token: string | undefined,
  parked: GateParkedError,
  log: Logger,
): Promise<never> {
  log.info(
    { waitedMs: parked.waitedMs, retryInMs: parked.retryInMs },
    "key's read budget exhausted while other keys' syncs wait: slot given back",
  );
  await job.moveToDelayed(Date.now() + parked.retryInMs, token);
  throw new DelayedError();
}
