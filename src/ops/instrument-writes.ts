import type { Job, Worker } from 'bullmq';
import type { OpsMetrics } from './metrics.js';

const field = (data: unknown, name: string): string => {
  const v = (data as Record<string, unknown> | null)?.[name];
  return typeof v === 'string' ? v : 'unknown';
};

const msOf = (job: Job): number | undefined =>
  job.finishedOn && job.processedOn ? Math.max(0, job.finishedOn - job.processedOn) : undefined;

/**
 * Counts each write's final outcome from the write worker's events: `completed` with the processor's status
 * (`ok`, `partial`, …), `failed` once BullMQ gives up on it. Retries are delays inside the job, not failures.
 */
export function instrumentWriteWorker(worker: Pick<Worker, 'on'>, metrics: Pick<OpsMetrics, 'writeFinished'>): void {
  worker.on('completed', (job: Job, result: unknown) => {
    const status = field(result, 'status');
    const ms = msOf(job);
    metrics.writeFinished({
      tenant: field(job.data, 'tenant'),
      collection: field(job.data, 'collection'),
      op: field(job.data, 'op'),
      status: status === 'unknown' ? 'ok' : status,
      ...(ms !== undefined ? { ms } : {}),
    });
  });
  worker.on('failed', (job: Job | undefined) => {
    if (!job) return;
    const ms = msOf(job);
    metrics.writeFinished({
      tenant: field(job.data, 'tenant'),
      collection: field(job.data, 'collection'),
      op: field(job.data, 'op'),
      status: 'failed',
      ...(ms !== undefined ? { ms } : {}),
    });
  });
}
